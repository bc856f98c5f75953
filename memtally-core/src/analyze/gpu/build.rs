//! The machine-wide GPU view: who holds each DRM client and dma-buf, and
//! each process's figures with shared things divided among their holders.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::{
    client_key, new_entry, sum_opt, Buffer, ClientKey, ClientView, DmaBufShare, GpuEntry, GpuInput,
    GpuProcess, GpuReport, GpuSource,
};
use crate::model::gpu::{DrmMemory, NvidiaUsed};
use crate::model::Note;

/// Builds the view from every process read (so shares are machine-wide),
/// keeping only the processes `keep` accepts.
pub fn build(inputs: &[GpuInput], keep: &dyn Fn(u32) -> bool) -> GpuReport {
    // Who holds each client and each buffer, across every process read.
    let mut holders: HashMap<ClientKey, BTreeSet<u32>> = HashMap::new();
    let mut buffers: HashMap<u64, Buffer> = HashMap::new();
    let mut drivers: BTreeSet<String> = BTreeSet::new();
    for p in inputs {
        for c in &p.gpu.drm {
            holders.entry(client_key(p.pid, c)).or_default().insert(p.pid);
            drivers.insert(c.driver.clone());
        }
        for b in &p.gpu.dmabufs {
            let e = buffers.entry(b.inode).or_default();
            e.size = b.size;
            e.from_fd = true;
            e.holders.insert(p.pid);
            if e.exporter.is_none() {
                e.exporter.clone_from(&b.exporter);
            }
        }
    }
    for p in inputs {
        for m in &p.gpu.dmabuf_maps {
            // fdinfo's size is the buffer's; a mapping may cover only part
            // of it, so mappings give a size only where no fd was seen.
            let e = buffers.entry(m.inode).or_default();
            if !e.from_fd {
                e.size = e.size.max(m.size);
            }
            e.holders.insert(p.pid);
        }
    }
    let counted_in_drm =
        |inode: &u64| buffers[inode].exporter.as_ref().is_some_and(|exp| drivers.contains(exp));

    let mut totals: BTreeMap<(String, String, String), GpuEntry> = BTreeMap::new();
    let mut seen_clients: BTreeSet<ClientKey> = BTreeSet::new();
    let mut processes = Vec::new();
    let mut notes = Vec::new();
    for p in inputs {
        // Within the process: one client per key (dup'd fds), and each
        // key's fds gathered in the same pass (not searched per client).
        let mut mine: BTreeMap<ClientKey, &crate::model::gpu::DrmClient> = BTreeMap::new();
        let mut fds_of: HashMap<ClientKey, Vec<u32>> = HashMap::new();
        for c in &p.gpu.drm {
            let key = client_key(p.pid, c);
            fds_of.entry(key.clone()).or_default().push(c.fd);
            mine.entry(key).or_insert(c);
        }
        let mut entries: BTreeMap<(String, String, String), GpuEntry> = BTreeMap::new();
        let mut proportional = 0u64;
        // Σ drm-purgeable, each client's divided among its holders as its
        // cost is: a client two processes hold is not purgeable twice.
        let mut purgeable: Option<u64> = None;
        for (key, c) in &mine {
            let n = holders.get(key).map_or(1, |h| h.len().max(1)) as u64;
            let first_time = seen_clients.insert(key.clone());
            for (region, m) in &c.regions {
                let k = (c.device().to_string(), c.driver.clone(), region.clone());
                let share = m.cost().map(|b| b / n);
                if let Some(p) = m.purgeable {
                    purgeable = Some(purgeable.unwrap_or(0).saturating_add(p / n));
                }
                let e = entries.entry(k.clone()).or_insert_with(|| new_entry(c, region));
                e.memory.add(m);
                e.clients += 1;
                e.shared_clients += usize::from(n > 1);
                if let Some(s) = share {
                    e.proportional = Some(e.proportional.unwrap_or(0).saturating_add(s));
                    proportional = proportional.saturating_add(s);
                }
                if first_time {
                    let t = totals.entry(k).or_insert_with(|| new_entry(c, region));
                    t.memory.add(m);
                    t.clients += 1;
                    t.shared_clients += usize::from(n > 1);
                    if let Some(cost) = m.cost() {
                        t.proportional = Some(t.proportional.unwrap_or(0).saturating_add(cost));
                    }
                }
            }
        }
        // nvidia-smi: one entry per GPU, keyed by its UUID; an unknown
        // figure stays unknown (the note says how many), never 0.
        for n in &p.gpu.nvidia {
            let bytes = match n.used {
                NvidiaUsed::Bytes(b) => Some(b),
                NvidiaUsed::Unknown(_) => None,
            };
            let e = GpuEntry {
                device: n.gpu_uuid.clone(),
                pdev: None,
                driver: "nvidia".into(),
                region: "vram".into(),
                memory: DrmMemory { total: bytes, ..Default::default() },
                clients: 1,
                shared_clients: 0,
                proportional: bytes,
                source: GpuSource::NvidiaSmi,
                nvidia_use: Some(n.kind),
            };
            let key = (n.gpu_uuid.clone(), "nvidia".to_string(), "vram".to_string());
            if let Some(b) = bytes {
                proportional = proportional.saturating_add(b);
            }
            let t = totals.entry(key.clone()).or_insert_with(|| GpuEntry {
                memory: DrmMemory::default(),
                proportional: None,
                clients: 0,
                nvidia_use: None,
                ..e.clone()
            });
            t.memory.add(&e.memory);
            t.clients += 1;
            if let Some(b) = bytes {
                t.proportional = Some(t.proportional.unwrap_or(0).saturating_add(b));
            }
            entries.insert(key, e);
        }
        // Buffers held by fd or mapped, each once per process.
        let inodes: BTreeSet<u64> = p
            .gpu
            .dmabufs
            .iter()
            .map(|b| b.inode)
            .chain(p.gpu.dmabuf_maps.iter().map(|m| m.inode))
            .collect();
        let mut dmabuf = DmaBufShare::default();
        for inode in &inodes {
            let Buffer { size, holders: who, .. } = &buffers[inode];
            let share = size / who.len().max(1) as u64;
            dmabuf.add(*size, share);
            if !counted_in_drm(inode) {
                proportional = proportional.saturating_add(share);
            }
        }
        if !keep(p.pid) {
            continue;
        }
        notes.extend(p.gpu.notes.iter().cloned());
        if mine.is_empty() && entries.is_empty() && inodes.is_empty() {
            continue;
        }
        let gpu: Vec<GpuEntry> = entries.into_values().collect();
        let reclaimable = sum_opt([p.gpu.lazy_free, purgeable].into_iter());
        processes.push(GpuProcess {
            pid: p.pid,
            comm: p.comm.clone(),
            command: p.command.clone(),
            gpu,
            dmabuf,
            drm_clients: mine.len(),
            clients: mine
                .iter()
                .map(|(key, c)| ClientView {
                    device: c.device().to_string(),
                    driver: c.driver.clone(),
                    client_id: c.client_id,
                    fds: fds_of.get(key).cloned().unwrap_or_default(),
                    shared_with: holders
                        .get(key)
                        .map(|h| h.iter().copied().filter(|&o| o != p.pid).collect())
                        .unwrap_or_default(),
                    extras: c.extras.iter().cloned().collect(),
                })
                .collect(),
            mapped: p.gpu.mapped,
            purgeable,
            reclaimable,
            proportional,
            notes: p.gpu.notes.clone(),
        });
    }
    processes.sort_by(|a, b| b.proportional.cmp(&a.proportional).then(a.pid.cmp(&b.pid)));
    let shown: BTreeSet<u32> = processes.iter().map(|p| p.pid).collect();
    let mut dmabuf = DmaBufShare::default();
    for b in buffers.values() {
        if b.holders.iter().any(|p| shown.contains(p)) {
            dmabuf.add(b.size, b.size);
        }
    }
    let proportional = processes.iter().map(|p| p.proportional).fold(0, u64::saturating_add);
    let notes = one_no_fd_record(notes);
    GpuReport {
        processes,
        totals: totals.into_values().collect(),
        dmabuf,
        proportional,
        notes,
        restricted: 0,
    }
}

/// The report's notes with every process's "no record of open files"
/// (a recorded tree made before GPU support) as one note, where several
/// say it; the processes' own notes keep theirs.
fn one_no_fd_record(notes: Vec<Note>) -> Vec<Note> {
    let without: Vec<&Note> =
        notes.iter().filter(|n| matches!(n, Note::NoFdRecord { .. })).collect();
    if without.len() < 2 {
        return notes;
    }
    let Note::NoFdRecord { path, record } = without[0].clone() else { return notes };
    let count = without.len();
    let mut out: Vec<Note> =
        notes.into_iter().filter(|n| !matches!(n, Note::NoFdRecord { .. })).collect();
    out.push(Note::NoFdRecords { count, first: path, record });
    out
}
