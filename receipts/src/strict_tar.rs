//! The strict `.tar.gz` reading both archive readers share — the bundle archive
//! (`bundle_file`) and the candidate archive (`archive`) — so that no extractor (`tar xzf`, an
//! auditor's) sees an entry, or a name, the verifier did not. The framing: one gzip member (its
//! CRC and length checked) and nothing after it, holding one tar stream that ends with its
//! end-of-archive marker and at most a record of zero padding, in whole blocks, under a bound
//! on what it unpacks to. The headers: read raw (the tar crate applies no PAX or GNU extension
//! header: each is an entry of its own), with the checks that tell an entry the writers of this
//! crate give from one they never do — its type byte, the ustar magic, plain octal numbers —
//! and its name as messages show it. Which entries an archive may hold is its reader's own
//! ([`ArchiveContents`]). It never extracts anything and never panics on what it reads.

use std::cell::Cell;
use std::io::{BufRead, Read, Take};

/// A tar block; headers, data and the end-of-archive marker come in whole blocks.
pub const TAR_BLOCK: u64 = 512;
/// Tar's default record (20 blocks): an archiver may pad the stream after its end-of-archive
/// marker up to the end of one (the writers of this crate pad none).
pub const TAR_RECORD: u64 = 20 * TAR_BLOCK;
/// A ustar header's name field, and its prefix field (the path is `prefix/name`).
pub const USTAR_NAME_BYTES: usize = 100;
pub const USTAR_PREFIX_BYTES: usize = 155;

/// Why a strict read stopped, before the reader's own verdict on an entry.
#[derive(Debug)]
pub enum TarRefusal {
    /// The archive is not in the format: what is wrong, the entry named when there is one.
    Malformed(String),
    /// The bytes below tar could not be read: a corrupt gzip stream, or the reader failed.
    Io(std::io::Error),
    /// The tar stream unpacks to more than the reader's bound.
    TooLarge,
}

/// What one kind of archive makes of its entries: the bundle's files, the candidate's.
pub trait ArchiveContents {
    /// The reader's refusal; a [`TarRefusal`] is one.
    type Error: From<TarRefusal>;

    /// Take entry `number` (counted from 1, every header one), its header read raw and its
    /// data not yet read. The name to give it if the header after it does not parse.
    fn add_entry<R: Read>(
        &mut self,
        number: usize,
        entry: &mut tar::Entry<'_, R>,
    ) -> Result<String, Self::Error>;

    /// After the last entry (at the end-of-archive marker or the end of the stream): what can
    /// only be told once every entry was seen.
    fn end(&mut self) -> Result<(), Self::Error>;
}

/// Read the `.tar.gz` from `reader` into `contents`: every entry in order, then the framing.
/// `archive` names the format in messages ("a bundle archive"); the tar stream may unpack to at
/// most `limit` bytes (headers, padding and the marker included), past which it is
/// [`TarRefusal::TooLarge`] whatever the tar reader made of the cut.
///
/// Refused as malformed: a header the tar reader cannot parse (a checksum that fails), a second
/// gzip member (which `tar xzf` would extract too) or any byte after the gzip stream, a tar
/// stream cut before its marker, anything but zeros after the marker, more than a record of
/// them, and a stream that is not whole blocks.
pub fn read_tar_gz<R: Read, C: ArchiveContents>(
    reader: R,
    limit: u64,
    archive: &str,
    contents: &mut C,
) -> Result<(), C::Error> {
    let mut gz = flate2::bufread::GzDecoder::new(std::io::BufReader::new(reader));
    let (padding, length) = {
        let mut stream = Counted {
            inner: (&mut gz).take(limit.saturating_add(1)),
            count: 0,
        };
        let read = read_entries(&mut stream, contents);
        // Past the bound the stream was cut: whatever the tar reader made of the cut, the
        // archive is too large.
        if stream.inner.limit() == 0 {
            return Err(TarRefusal::TooLarge.into());
        }
        read?;
        let padding = padding(&mut stream)?;
        (padding, stream.count)
    };
    // The gzip member ended (its trailer checked): nothing may follow it.
    let mut rest = gz.into_inner();
    if !rest.fill_buf().map_err(TarRefusal::Io)?.is_empty() {
        return Err(TarRefusal::Malformed(format!(
            "bytes follow the gzip stream (another gzip member or trailing data); {archive} is \
             one gzip member and nothing after it"
        ))
        .into());
    }
    Ok(end_marker(padding, length)?)
}

/// Every entry of the tar stream, headers raw, into `contents`; the tar reader stops at the
/// first zero block (which it consumes) or at the end of the stream.
fn read_entries<R: Read, C: ArchiveContents>(
    stream: &mut R,
    contents: &mut C,
) -> Result<(), C::Error> {
    let failed = Cell::new(false);
    let mut archive = tar::Archive::new(Watched {
        inner: stream,
        failed: &failed,
    });
    let mut entries = archive.entries().map_err(TarRefusal::Io)?.raw(true);
    // The last entry's name, to place a header that does not parse.
    let mut previous: Option<String> = None;
    for number in 1.. {
        let mut entry = match entries.next() {
            None => break,
            Some(Ok(entry)) => entry,
            // The gzip stream below failed (a corrupt member): not a question of tar.
            Some(Err(error)) if failed.get() => return Err(TarRefusal::Io(error).into()),
            Some(Err(error)) => {
                let after = previous
                    .map(|name| format!(" (after {name})"))
                    .unwrap_or_default();
                return Err(TarRefusal::Malformed(format!(
                    "entry {number}{after}: its tar header is unreadable ({error})"
                ))
                .into());
            }
        };
        previous = Some(contents.add_entry(number, &mut entry)?);
    }
    contents.end()
}

/// The type byte of a header as written: the tar crate reads NUL (pre-POSIX) as a regular file
/// too, and this tells them apart.
pub fn type_flag(header: &tar::Header) -> u8 {
    header.as_old().linkflag[0]
}

/// The path a header gives (a ustar header's `prefix/name`, another's name field) as messages
/// show it: invalid UTF-8 replaced; the report escapes what a terminal would act on.
pub fn shown_path(header: &tar::Header) -> String {
    String::from_utf8_lossy(&header.path_bytes()).into_owned()
}

/// Why the header of an entry the reader takes as `noun` ("a regular file", "a directory") is
/// not one the writers of this crate give: not a ustar header (an old GNU one, or one without
/// the magic: pre-POSIX), or a size or mode field that is not plain octal (an extractor that
/// cannot read the mode — the tar crate's — refuses the entry the reader took). Finishes
/// "entry N (name) is …"; `None` when the header is as written.
pub fn ustar_problem(header: &tar::Header, noun: &str) -> Option<String> {
    if header.as_ustar().is_none() {
        return Some(if header.as_gnu().is_some() {
            format!("{noun} in an old GNU header")
        } else {
            format!("{noun} in a header without the ustar magic")
        });
    }
    if !plain_octal(&header.as_old().size) {
        return Some(format!("{noun} whose size field is not 11 octal digits"));
    }
    if !plain_octal(&header.as_old().mode) {
        return Some(format!("{noun} whose mode field is not 7 octal digits"));
    }
    None
}

/// A numeric header field as the tar crate writes one for a value under its octal bound (every
/// size and mode the writers give): octal digits, zero-padded, and one NUL. Readers agree on
/// it; on spaces, signs or GNU's base-256 form they may not, and then not on where the next
/// header starts.
pub fn plain_octal(field: &[u8]) -> bool {
    match field.split_last() {
        Some((0, digits)) => !digits.is_empty() && digits.iter().all(|b| (b'0'..=b'7').contains(b)),
        _ => false,
    }
}

/// Whether a ustar header holds `path`: in its name field, or split at a slash into its prefix
/// and name fields. Exactly then the tar crate's builder writes no GNU long name for it.
pub fn fits_ustar(path: &[u8]) -> bool {
    path.len() <= USTAR_NAME_BYTES
        || path.iter().enumerate().any(|(at, &byte)| {
            byte == b'/'
                && at > 0
                && at <= USTAR_PREFIX_BYTES
                && at + 1 < path.len()
                && path.len() - at - 1 <= USTAR_NAME_BYTES
        })
}

/// Whether `path` is relative and made of plain names: not empty, no leading `/`, and no
/// empty, `.` or `..` name (so no extractor places it anywhere but where it reads).
pub fn plain_relative(path: &str) -> bool {
    !path.is_empty()
        && !path.starts_with('/')
        && path
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..")
}

/// What an entry whose type byte is `type_flag` is, for "entry N (name) is …" (a reader names
/// this way the kinds it refuses).
pub fn kind_of(type_flag: u8) -> String {
    let what = match type_flag {
        b'0' => "a regular file",
        b'1' => "a hard link",
        b'2' => "a symlink",
        b'3' => "a character device",
        b'4' => "a block device",
        b'5' => "a directory",
        b'6' => "a FIFO",
        b'7' => "a contiguous file",
        b'x' => "a PAX extended header",
        b'g' => "a PAX global header",
        b'L' => "a GNU long name",
        b'K' => "a GNU long link name",
        b'S' => "a GNU sparse file",
        0 => return "an old-style regular file (type NUL)".to_string(),
        byte if byte.is_ascii_graphic() => return format!("an entry of type '{}'", byte as char),
        byte => return format!("an entry of type {byte:#04x}"),
    };
    format!("{what} (type '{}')", type_flag as char)
}

/// The `size` bytes of an entry (`name` names it if the stream ends inside it).
pub fn read_data<R: Read>(
    entry: &mut tar::Entry<'_, R>,
    size: u64,
    name: &str,
) -> Result<Vec<u8>, TarRefusal> {
    let mut bytes = Vec::new();
    entry
        .take(size)
        .read_to_end(&mut bytes)
        .map_err(TarRefusal::Io)?;
    if bytes.len() as u64 != size {
        return Err(TarRefusal::Malformed(format!(
            "the tar stream ends inside {name} ({} of its {size} bytes)",
            bytes.len()
        )));
    }
    Ok(bytes)
}

/// A reader that counts the bytes it gave.
struct Counted<R> {
    inner: R,
    count: u64,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count += n as u64;
        Ok(n)
    }
}

/// A reader that remembers whether the reader below it failed: then an error of the tar reader
/// above is the gzip stream's (an I/O error), else the tar stream's own (malformed).
struct Watched<'a, R> {
    inner: R,
    failed: &'a Cell<bool>,
}

impl<R: Read> Read for Watched<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.inner.read(buf).inspect_err(|_| self.failed.set(true))
    }
}

/// What follows the entries, to the end of the gzip member (whose trailer the decoder checks
/// there): only zeros, at most the marker's second block and a record of padding. The number
/// of zero bytes read; the tar reader has consumed the first zero block, if any.
fn padding<R: Read>(stream: &mut Counted<Take<R>>) -> Result<u64, TarRefusal> {
    let mut rest = 0u64;
    let mut buf = [0u8; 4096];
    loop {
        let n = stream.read(&mut buf).map_err(TarRefusal::Io)?;
        if n == 0 {
            break;
        }
        if buf[..n].iter().any(|&b| b != 0) {
            return Err(TarRefusal::Malformed(
                "data follows the tar end-of-archive marker (another archive or a hidden \
                 entry); nothing but zero padding may follow it"
                    .to_string(),
            ));
        }
        rest += n as u64;
        if TAR_BLOCK + rest > 2 * TAR_BLOCK + TAR_RECORD {
            return Err(TarRefusal::Malformed(format!(
                "more than {TAR_RECORD} bytes of zeros pad the tar stream after its \
                 end-of-archive marker"
            )));
        }
    }
    if stream.inner.limit() == 0 {
        return Err(TarRefusal::TooLarge);
    }
    Ok(rest)
}

/// The tar reader stopped at a zero block (consumed) or at the end of the stream (then
/// nothing followed): with `padding` zero bytes after where it stopped and `length` bytes in
/// all, the stream ends with the end-of-archive marker (two zero blocks) in whole blocks.
fn end_marker(padding: u64, length: u64) -> Result<(), TarRefusal> {
    if padding < TAR_BLOCK {
        return Err(TarRefusal::Malformed(
            "the tar stream does not end with its end-of-archive marker (two zero blocks): \
             it was cut short"
                .to_string(),
        ));
    }
    if !length.is_multiple_of(TAR_BLOCK) {
        return Err(TarRefusal::Malformed(format!(
            "the tar stream is {length} bytes long, not a whole number of {TAR_BLOCK}-byte blocks"
        )));
    }
    Ok(())
}

/// Tar streams as they sit, entry by entry, for the readers' tests: headers written raw (the
/// tar crate's own checks would refuse some of these names), checksums set.
#[cfg(test)]
pub mod blocks {
    use std::io::Write;
    use tar::EntryType::{self, Regular};

    /// A ustar header (as the writers give) for an entry of `kind` and `size` bytes, mode 0644,
    /// `name` written raw into its name field.
    pub fn ustar(name: &str, kind: EntryType, size: u64) -> tar::Header {
        let mut header = tar::Header::new_ustar();
        fill(&mut header, name, kind, size);
        header
    }

    /// The same in an old GNU header (magic `ustar  `, GNU tar's default format): the tar
    /// crate's builder writes its GNU long names in one.
    pub fn old_gnu(name: &str, kind: EntryType, size: u64) -> tar::Header {
        let mut header = tar::Header::new_gnu();
        fill(&mut header, name, kind, size);
        header
    }

    /// Set a header's type, size, mode 0644 and raw name, and its checksum.
    pub fn fill(header: &mut tar::Header, name: &str, kind: EntryType, size: u64) {
        header.set_entry_type(kind);
        header.set_size(size);
        header.set_mode(0o644);
        header.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
        header.set_cksum();
    }

    /// An entry as it sits in a tar stream: its header block, then its data in whole blocks.
    pub fn block(header: &tar::Header, data: &[u8]) -> Vec<u8> {
        let mut bytes = header.as_bytes().to_vec();
        bytes.extend_from_slice(data);
        bytes.resize(bytes.len().next_multiple_of(512), 0);
        bytes
    }

    /// A regular file in a ustar header, mode 0644.
    pub fn file(name: &str, data: &[u8]) -> Vec<u8> {
        block(&ustar(name, Regular, data.len() as u64), data)
    }

    /// A PAX header (`XHeader` or `XGlobalHeader`) named `name` holding `records`
    /// (`key=value`), each as `<length> key=value\n` with the length counting itself.
    pub fn pax(kind: EntryType, name: &str, records: &[&str]) -> Vec<u8> {
        let mut data = String::new();
        for record in records {
            let body = format!(" {record}\n");
            let mut length = body.len() + 1;
            while format!("{length}{body}").len() != length {
                length += 1;
            }
            data.push_str(&format!("{length}{body}"));
        }
        block(&ustar(name, kind, data.len() as u64), data.as_bytes())
    }

    /// A GNU long name (`L`) or long link name (`K`) entry for `name`, as the tar crate's
    /// builder writes one: an old GNU header named `././@LongLink`, the name and a NUL.
    pub fn gnu_long_name(kind: EntryType, name: &str) -> Vec<u8> {
        let data = [name.as_bytes(), b"\0"].concat();
        block(&old_gnu("././@LongLink", kind, data.len() as u64), &data)
    }

    /// The gzip'd tar stream of `entries` and its end-of-archive marker.
    pub fn archive_of(entries: &[Vec<u8>]) -> Vec<u8> {
        gzip(&[entries.concat(), vec![0; 1024]].concat())
    }

    pub fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(bytes).unwrap();
        gz.finish().unwrap()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_octal_is_digits_then_one_nul() {
        assert!(plain_octal(b"00000000644\0"));
        assert!(plain_octal(b"0000755\0"));
        for field in [
            &b"0000755 "[..],
            b" 000755\0",
            b"0000955\0",
            b"\0",
            b"",
            b"\x80\0\0\0\0\0\0\x01",
        ] {
            assert!(!plain_octal(field), "{field:?}");
        }
    }

    /// The names and bytes of an archive's entries, whatever their kind.
    #[derive(Default)]
    struct Everything(Vec<(String, Vec<u8>)>);

    impl ArchiveContents for Everything {
        type Error = TarRefusal;

        fn add_entry<R: Read>(
            &mut self,
            _number: usize,
            entry: &mut tar::Entry<'_, R>,
        ) -> Result<String, TarRefusal> {
            let name = shown_path(entry.header());
            let size = entry.size();
            let bytes = read_data(entry, size, &name)?;
            self.0.push((name.clone(), bytes));
            Ok(name)
        }

        fn end(&mut self) -> Result<(), TarRefusal> {
            Ok(())
        }
    }

    fn read(archive: &[u8], limit: u64) -> Result<Vec<(String, Vec<u8>)>, TarRefusal> {
        let mut everything = Everything::default();
        read_tar_gz(archive, limit, "a test archive", &mut everything)?;
        Ok(everything.0)
    }

    #[test]
    fn a_stream_past_its_bound_is_too_large_wherever_the_cut_falls() {
        let archive = blocks::archive_of(&[blocks::file("big", &[7; 4096])]);
        // Header, data and the marker: 512 + 4096 + 1024 bytes.
        assert_eq!(
            read(&archive, 5632).unwrap(),
            [("big".into(), vec![7; 4096])]
        );
        for limit in [0, 100, 512, 2048, 4608, 5120, 5631] {
            assert!(
                matches!(read(&archive, limit), Err(TarRefusal::TooLarge)),
                "{limit}"
            );
        }
    }

    #[test]
    fn extension_headers_are_entries_of_their_own() {
        let archive = blocks::archive_of(&[
            blocks::pax(tar::EntryType::XHeader, "PaxHeaders/x", &["path=renamed"]),
            blocks::file("x", b"data"),
        ]);
        let names: Vec<String> = read(&archive, 1 << 20)
            .unwrap()
            .into_iter()
            .map(|(name, _)| name)
            .collect();
        assert_eq!(names, ["PaxHeaders/x", "x"]);
    }

    #[test]
    fn plain_relative_paths_have_only_plain_names() {
        assert!(plain_relative("bin/mcpscope"));
        for path in [
            "", "/bin/x", "./bin/x", "bin//x", "bin/", "a/../x", "..", "a/.",
        ] {
            assert!(!plain_relative(path), "{path}");
        }
    }
}
