//! The login names of the users a scan's processes run as, read with the
//! scan: a printer names a process's user from this table, never from the
//! system.

/// uid -> login name, for the uids a scan met.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Users {
    /// (uid, name), by uid.
    names: Vec<(u32, String)>,
}

impl Users {
    /// The table of these (uid, name) pairs.
    pub fn new(mut names: Vec<(u32, String)>) -> Users {
        names.sort();
        names.dedup_by_key(|(uid, _)| *uid);
        Users { names }
    }

    /// The name of `uid`, its number when the system has no name for it,
    /// `?` when the uid is unknown.
    pub fn name(&self, uid: Option<u32>) -> String {
        let Some(uid) = uid else { return "?".into() };
        match self.names.binary_search_by_key(&uid, |(u, _)| *u) {
            Ok(i) => self.names[i].1.clone(),
            Err(_) => uid.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Users;

    #[test]
    fn names_a_uid_by_its_name_else_its_number() {
        let users = Users::new(vec![(1000, "alice".into()), (0, "root".into())]);
        assert_eq!(users.name(Some(0)), "root");
        assert_eq!(users.name(Some(1000)), "alice");
        assert_eq!(users.name(Some(5)), "5");
        assert_eq!(users.name(None), "?");
    }
}
