//! The errors a failed read of a process's file becomes: gone, refused
//! (and why, and whose it is), bad input, or plain I/O.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use super::ProcRoot;
use crate::error::Error;
use crate::source::parse::status;

impl ProcRoot {
    /// Turns an I/O error on a process file into the error a user can act on.
    pub(crate) fn explain(&self, pid: u32, path: PathBuf, e: std::io::Error) -> Error {
        match e.kind() {
            ErrorKind::NotFound if self.kind(Path::new(&pid.to_string())).is_none() => {
                Error::NoSuchProcess { pid, path: self.root.join(pid.to_string()) }
            }
            // A process that exits while its files are read gives ESRCH.
            _ if e.raw_os_error() == Some(libc::ESRCH) => {
                Error::NoSuchProcess { pid, path: self.root.join(pid.to_string()) }
            }
            ErrorKind::PermissionDenied => {
                let why = crate::source::access::why_denied(self, pid);
                Error::PermissionDenied { pid, path, owner: self.owner(pid), why }
            }
            // Too big, or not a regular file in a recorded tree.
            ErrorKind::InvalidData => Error::Parse { path, message: e.to_string() },
            _ => Error::io(path, e),
        }
    }

    /// Who owns a process, as `user NAME (uid N)`, for error messages.
    fn owner(&self, pid: u32) -> String {
        let uid =
            self.read(pid, "status").ok().and_then(|b| status::parse(&b).ok()?.uid).or_else(|| {
                use std::os::unix::fs::MetadataExt;
                // Only the live /proc's owners mean anything here.
                std::fs::metadata(self.root.join(pid.to_string()))
                    .ok()
                    .filter(|_| self.tree.is_none())
                    .map(|m| m.uid())
            });
        match uid {
            Some(uid) => match crate::source::users::user_name(uid) {
                Some(name) => format!("user {name} (uid {uid})"),
                None => format!("uid {uid}"),
            },
            None => "another user".to_string(),
        }
    }
}
