//! The native cache's content-addressed store: every verified file (wheel, `.deb`, the binary
//! out of the wheel, each runtime file out of the `.deb`) lives at `<cache>/sha256/<hex>`, read
//! only, and nowhere else. A file enters only through `insert`, which writes to a temporary
//! name in the same directory, hashes while writing and renames into place only when digest
//! and size are the ones expected; a lookup re-hashes, so a tampered or truncated entry is
//! reported, never used. It never downloads and never deletes an entry it did not just write.

use sha2::{Digest as _, Sha256};
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// What a store lookup found.
#[derive(Debug, PartialEq, Eq)]
pub enum Entry {
    /// Present and its bytes hash to its name.
    Verified(PathBuf),
    Absent,
    /// Present, but its bytes are not what its name says (tampered, truncated, disk fault).
    Corrupt {
        path: PathBuf,
        actual: String,
        size: u64,
    },
}

/// A write whose bytes were not the ones expected (nothing was stored).
#[derive(Debug, PartialEq, Eq)]
pub struct Mismatch {
    pub actual: String,
    pub size: u64,
}

pub struct Store {
    dir: PathBuf,
}

impl Store {
    pub fn open(cache: &Path) -> io::Result<Store> {
        let dir = cache.join("sha256");
        fs::create_dir_all(&dir)?;
        Ok(Store { dir })
    }

    pub fn path_of(&self, sha256: &str) -> PathBuf {
        self.dir.join(sha256)
    }

    /// Look an entry up, re-hashing it.
    pub fn lookup(&self, sha256: &str, size: u64) -> io::Result<Entry> {
        let path = self.path_of(sha256);
        let file = match File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Entry::Absent),
            Err(e) => return Err(e),
        };
        let (actual, n) = hash_reader(file)?;
        if actual == sha256 && n == size {
            Ok(Entry::Verified(path))
        } else {
            Ok(Entry::Corrupt {
                path,
                actual,
                size: n,
            })
        }
    }

    /// Stream `reader` into the store under `sha256` if (and only if) its bytes hash to it and
    /// number `size`; `executable` gives mode 0555, else 0444.
    pub fn insert(
        &self,
        reader: impl Read,
        sha256: &str,
        size: u64,
        executable: bool,
    ) -> io::Result<Result<PathBuf, Mismatch>> {
        let temp = tempfile::Builder::new()
            .prefix(".incoming-")
            .tempfile_in(&self.dir)?;
        let (actual, n) = copy_hashing(reader, temp.as_file())?;
        if actual != sha256 || n != size {
            return Ok(Err(Mismatch { actual, size: n }));
        }
        temp.as_file().sync_all()?;
        let mode = if executable { 0o555 } else { 0o444 };
        fs::set_permissions(temp.path(), fs::Permissions::from_mode(mode))?;
        let path = self.path_of(sha256);
        temp.persist(&path).map_err(|e| e.error)?;
        Ok(Ok(path))
    }
}

impl Store {
    /// Stream `reader` into the store under the digest its bytes have (resolving a new lock,
    /// when there is nothing yet to expect); returns (path, sha256, size).
    pub fn insert_as_hashed(
        &self,
        reader: impl Read,
        executable: bool,
    ) -> io::Result<(PathBuf, String, u64)> {
        let temp = tempfile::Builder::new()
            .prefix(".incoming-")
            .tempfile_in(&self.dir)?;
        let (sha256, size) = copy_hashing(reader, temp.as_file())?;
        temp.as_file().sync_all()?;
        let mode = if executable { 0o555 } else { 0o444 };
        fs::set_permissions(temp.path(), fs::Permissions::from_mode(mode))?;
        let path = self.path_of(&sha256);
        temp.persist(&path).map_err(|e| e.error)?;
        Ok((path, sha256, size))
    }
}

/// sha256 (hex) and length of everything `reader` yields.
pub fn hash_reader(reader: impl Read) -> io::Result<(String, u64)> {
    copy_hashing(reader, io::sink())
}

fn copy_hashing(mut reader: impl Read, mut out: impl Write) -> io::Result<(String, u64)> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut total = 0u64;
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        hasher.update(&buf[..n]);
        out.write_all(&buf[..n])?;
        total += n as u64;
    }
    out.flush()?;
    Ok((hex::encode(hasher.finalize()), total))
}

#[cfg(test)]
mod tests {
    use super::*;
    use scopebox_schema::digest::sha256_hex;

    #[test]
    fn an_inserted_file_is_found_verified_and_read_only() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let sha = sha256_hex(b"hello");
        assert_eq!(store.lookup(&sha, 5).unwrap(), Entry::Absent);
        let path = store.insert(&b"hello"[..], &sha, 5, true).unwrap().unwrap();
        assert_eq!(path, store.path_of(&sha));
        assert_eq!(
            store.lookup(&sha, 5).unwrap(),
            Entry::Verified(path.clone())
        );
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o555);
    }

    #[test]
    fn a_mismatch_stores_nothing_and_reports_the_actual_digest() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let expected = sha256_hex(b"hello");
        let got = store.insert(&b"hellp"[..], &expected, 5, false).unwrap();
        assert_eq!(
            got,
            Err(Mismatch {
                actual: sha256_hex(b"hellp"),
                size: 5
            })
        );
        assert_eq!(store.lookup(&expected, 5).unwrap(), Entry::Absent);
        // No temporary file is left behind either.
        assert_eq!(fs::read_dir(dir.path().join("sha256")).unwrap().count(), 0);
        // Right bytes, wrong size claimed: also refused.
        assert!(store
            .insert(&b"hello"[..], &expected, 6, false)
            .unwrap()
            .is_err());
    }

    #[test]
    fn an_entry_stored_as_hashed_is_named_by_its_digest() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let (path, sha, size) = store.insert_as_hashed(&b"abc"[..], false).unwrap();
        assert_eq!(sha, sha256_hex(b"abc"));
        assert_eq!(size, 3);
        assert_eq!(store.lookup(&sha, 3).unwrap(), Entry::Verified(path));
    }

    #[test]
    fn a_tampered_entry_is_reported_corrupt_with_what_it_holds() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let sha = sha256_hex(b"hello");
        let path = store
            .insert(&b"hello"[..], &sha, 5, false)
            .unwrap()
            .unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        fs::write(&path, b"HELLO!").unwrap();
        assert_eq!(
            store.lookup(&sha, 5).unwrap(),
            Entry::Corrupt {
                path,
                actual: sha256_hex(b"HELLO!"),
                size: 6
            }
        );
    }
}
