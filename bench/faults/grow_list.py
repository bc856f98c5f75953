import time
time.sleep(1.0)
x = []
for i in range(200000):
    x.append("item %d" % i * 4)
time.sleep(0.5)
