//! User names for uids, from `/etc/passwd` on Linux (no NSS: memtally
//! stays a static, dependency-light reader, and a uid is always shown when
//! no name is found); on macOS from the system's user database
//! (`getpwuid_r`: its `/etc/passwd` holds only the system's own users).

/// The login name of `uid`, if `/etc/passwd` has it.
#[cfg(not(target_os = "macos"))]
pub(crate) fn user_name(uid: u32) -> Option<String> {
    all_users().into_iter().find_map(|(u, name)| (u == uid).then_some(name))
}

#[cfg(target_os = "macos")]
pub(crate) use crate::sys::libproc::{uid_of, user_name};

/// The uid of a login name, if `/etc/passwd` has it.
#[cfg(not(target_os = "macos"))]
pub(crate) fn uid_of(name: &str) -> Option<u32> {
    all_users().into_iter().find_map(|(uid, n)| (n == name).then_some(uid))
}

/// Every (uid, name) in `/etc/passwd`.
#[cfg(not(target_os = "macos"))]
fn all_users() -> Vec<(u32, String)> {
    users_in(&std::fs::read_to_string("/etc/passwd").unwrap_or_default())
}

#[cfg(not(target_os = "macos"))]
fn users_in(passwd: &str) -> Vec<(u32, String)> {
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

/// uid -> name, reading `/etc/passwd` once, on first use (on macOS each
/// uid asked for, looked up once: there is no list of every user).
#[derive(Debug, Default)]
pub struct UserNames {
    #[cfg(not(target_os = "macos"))]
    cache: std::sync::OnceLock<Vec<(u32, String)>>,
    #[cfg(target_os = "macos")]
    cache: std::sync::Mutex<Vec<(u32, String)>>,
}

impl UserNames {
    /// The name of `uid`, its number when the system has no name for it,
    /// `?` when the uid is unknown.
    pub fn name(&self, uid: Option<u32>) -> String {
        let Some(uid) = uid else { return "?".into() };
        #[cfg(not(target_os = "macos"))]
        let all = self.cache.get_or_init(all_users);
        #[cfg(target_os = "macos")]
        let mut all = self.cache.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        #[cfg(target_os = "macos")]
        if !all.iter().any(|(u, _)| *u == uid) {
            let name = user_name(uid).unwrap_or_else(|| uid.to_string());
            all.push((uid, name));
        }
        all.iter().find(|(u, _)| *u == uid).map_or_else(|| uid.to_string(), |(_, n)| n.clone())
    }

    /// The names of these uids (a process's uid from its scan), as a table
    /// that names them without reading the system again.
    pub fn of(&self, uids: impl IntoIterator<Item = u32>) -> crate::model::Users {
        let mut uids: Vec<u32> = uids.into_iter().collect();
        uids.sort_unstable();
        uids.dedup();
        crate::model::Users::new(uids.into_iter().map(|u| (u, self.name(Some(u)))).collect())
    }
}

#[cfg(all(test, not(target_os = "macos")))]
mod tests {
    #[test]
    fn finds_names_by_uid() {
        let p = "root:x:0:0:root:/root:/bin/bash\nalice:x:1000:1000::/home/alice:/bin/sh\n";
        assert_eq!(super::users_in(p), [(0, "root".into()), (1000, "alice".into())]);
    }
}
