//! User names for uids, from `/etc/passwd` (no NSS: memtally stays a
//! static, dependency-light reader, and a uid is always shown when no name
//! is found).

/// The login name of `uid`, if `/etc/passwd` has it.
pub(crate) fn user_name(uid: u32) -> Option<String> {
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    name_in_passwd(&passwd, uid)
}

fn name_in_passwd(passwd: &str, uid: u32) -> Option<String> {
    passwd.lines().find_map(|line| {
        let mut f = line.split(':');
        let name = f.next()?;
        let _pw = f.next()?;
        let id: u32 = f.next()?.parse().ok()?;
        (id == uid).then(|| name.to_string())
    })
}

/// The uid of a login name, if `/etc/passwd` has it.
pub(crate) fn uid_of(name: &str) -> Option<u32> {
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|line| {
        let mut f = line.split(':');
        (f.next()? == name).then_some(())?;
        f.next()?;
        f.next()?.parse().ok()
    })
}

/// Every (uid, name) in `/etc/passwd`.
fn all_users() -> Vec<(u32, String)> {
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    passwd
        .lines()
        .filter_map(|line| {
            let mut f = line.split(':');
            let name = f.next()?;
            f.next()?;
            Some((f.next()?.parse().ok()?, name.to_string()))
        })
        .collect()
}

/// uid -> name, reading `/etc/passwd` once, on first use.
#[derive(Debug, Default)]
pub struct UserNames {
    cache: std::sync::OnceLock<Vec<(u32, String)>>,
}

impl UserNames {
    /// The name of `uid`, its number when `/etc/passwd` has no name, `?`
    /// when the uid is unknown.
    pub fn name(&self, uid: Option<u32>) -> String {
        let Some(uid) = uid else { return "?".into() };
        let all = self.cache.get_or_init(all_users);
        all.iter().find(|(u, _)| *u == uid).map_or_else(|| uid.to_string(), |(_, n)| n.clone())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn finds_names_by_uid() {
        let p = "root:x:0:0:root:/root:/bin/bash\nalice:x:1000:1000::/home/alice:/bin/sh\n";
        assert_eq!(super::name_in_passwd(p, 1000).as_deref(), Some("alice"));
        assert_eq!(super::name_in_passwd(p, 5), None);
    }
}
