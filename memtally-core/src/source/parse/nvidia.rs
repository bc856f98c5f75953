//! `nvidia-smi -q -x` output: an XML document with, per `<gpu>`, its
//! `<uuid>` and a `<processes>` list of `<process_info>` (`<pid>`,
//! `<type>`, `<used_memory>`), graphics and compute processes alike.

use roxmltree::{Document, Node, ParsingOptions};

use super::ParseError;
use crate::model::gpu::{NvidiaMemory, NvidiaUse, NvidiaUsed};

/// Reads every process of every GPU: (pid, its memory on that GPU), one
/// entry per process and GPU (several `<process_info>` of the same pair,
/// MIG instances, added up). A `<used_memory>` of `N/A` or a bracketed
/// word (`[Insufficient Permissions]`) is an unknown figure. A document
/// that is not nvidia-smi's, or a process without a PID, a known type or
/// a used-memory that is `N MiB` or one of those words, makes the whole
/// output untrusted: one error naming the line.
pub fn parse(out: &[u8]) -> Result<Vec<(u32, NvidiaMemory)>, ParseError> {
    let text = std::str::from_utf8(out).map_err(|_| {
        ParseError::at(
            0,
            "nvidia-smi -q -x printed bytes that are not UTF-8; NVIDIA figures left out",
        )
    })?;
    // nvidia-smi starts its document with a <!DOCTYPE> naming its DTD.
    let options = ParsingOptions { allow_dtd: true, ..ParsingOptions::default() };
    let doc = Document::parse_with_options(text, options).map_err(|e| {
        ParseError::at(
            e.pos().row as usize,
            format!("nvidia-smi -q -x printed no XML document ({e}); NVIDIA figures left out"),
        )
    })?;
    let root = doc.root_element();
    if !root.has_tag_name("nvidia_smi_log") {
        return Err(bad(root, "its document is not an <nvidia_smi_log>"));
    }
    let mut usage: Vec<(u32, NvidiaMemory)> = Vec::new();
    for gpu in root.children().filter(|n| n.has_tag_name("gpu")) {
        let uuid = child_text(gpu, "uuid").ok_or_else(|| bad(gpu, "a <gpu> has no <uuid>"))?;
        let infos = gpu
            .children()
            .filter(|n| n.has_tag_name("processes"))
            .flat_map(|p| p.children().filter(|n| n.has_tag_name("process_info")));
        for info in infos {
            let pid = child_text(info, "pid")
                .and_then(|p| p.parse::<u32>().ok())
                .ok_or_else(|| bad(info, "a <process_info> has no <pid> that is a number"))?;
            let kind = match child_text(info, "type") {
                Some("G") => NvidiaUse::Graphics,
                Some("C") => NvidiaUse::Compute,
                Some("C+G") => NvidiaUse::ComputeAndGraphics,
                Some("M") => NvidiaUse::Mps,
                Some("M+C") => NvidiaUse::MpsAndCompute,
                other => {
                    return Err(bad(
                        info,
                        &format!("a <process_info> has an unknown <type> {other:?}"),
                    ))
                }
            };
            let used = child_text(info, "used_memory")
                .and_then(used)
                .ok_or_else(|| bad(info, "a <process_info> has no <used_memory> of `N MiB`"))?;
            match usage.iter_mut().find(|(p, m)| *p == pid && m.gpu_uuid == uuid) {
                Some((_, m)) => {
                    if let (NvidiaUsed::Bytes(a), NvidiaUsed::Bytes(b)) = (&mut m.used, &used) {
                        *a = a.saturating_add(*b);
                    }
                }
                None => usage.push((pid, NvidiaMemory { gpu_uuid: uuid.to_string(), kind, used })),
            }
        }
    }
    Ok(usage)
}

/// A `<used_memory>`: `123 MiB`, or the word nvidia-smi prints instead.
fn used(text: &str) -> Option<NvidiaUsed> {
    if text == "N/A" || (text.starts_with('[') && text.ends_with(']')) {
        return Some(NvidiaUsed::Unknown(text.to_string()));
    }
    let mib: u64 = text.strip_suffix(" MiB")?.parse().ok()?;
    mib.checked_mul(1 << 20).map(NvidiaUsed::Bytes)
}

/// The trimmed text of `node`'s first child element named `name`.
fn child_text<'a>(node: Node<'a, '_>, name: &str) -> Option<&'a str> {
    node.children().find(|n| n.has_tag_name(name))?.text().map(str::trim)
}

fn bad(node: Node, what: &str) -> ParseError {
    let row = node.document().text_pos_at(node.range().start).row as usize;
    ParseError::at(row, format!("nvidia-smi -q -x: {what}; NVIDIA figures left out"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO_GPUS: &str = r#"<?xml version="1.0" ?>
<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">
<nvidia_smi_log>
	<attached_gpus>2</attached_gpus>
	<gpu id="00000000:01:00.0">
		<uuid>GPU-aaaa</uuid>
		<processes>
			<process_info>
				<gpu_instance_id>N/A</gpu_instance_id>
				<compute_instance_id>N/A</compute_instance_id>
				<pid>10</pid>
				<type>G</type>
				<process_name>/usr/lib/xorg/Xorg</process_name>
				<used_memory>100 MiB</used_memory>
			</process_info>
			<process_info>
				<pid>11</pid>
				<type>C</type>
				<process_name>python3</process_name>
				<used_memory>[Insufficient Permissions]</used_memory>
			</process_info>
		</processes>
	</gpu>
	<gpu id="00000000:02:00.0">
		<uuid>GPU-bbbb</uuid>
		<processes>
			<process_info>
				<pid>10</pid>
				<type>C+G</type>
				<used_memory>2 MiB</used_memory>
			</process_info>
			<process_info>
				<pid>10</pid>
				<type>C+G</type>
				<used_memory>3 MiB</used_memory>
			</process_info>
		</processes>
	</gpu>
</nvidia_smi_log>
"#;

    fn mem(uuid: &str, kind: NvidiaUse, used: NvidiaUsed) -> NvidiaMemory {
        NvidiaMemory { gpu_uuid: uuid.into(), kind, used }
    }

    #[test]
    fn reads_every_process_of_every_gpu() {
        let u = parse(TWO_GPUS.as_bytes()).unwrap();
        assert_eq!(
            u,
            vec![
                (10, mem("GPU-aaaa", NvidiaUse::Graphics, NvidiaUsed::Bytes(100 << 20))),
                (
                    11,
                    mem(
                        "GPU-aaaa",
                        NvidiaUse::Compute,
                        NvidiaUsed::Unknown("[Insufficient Permissions]".into())
                    )
                ),
                (10, mem("GPU-bbbb", NvidiaUse::ComputeAndGraphics, NvidiaUsed::Bytes(5 << 20))),
            ]
        );
        let none = "<nvidia_smi_log><gpu><uuid>GPU-a</uuid><processes>\n</processes></gpu></nvidia_smi_log>";
        assert_eq!(parse(none.as_bytes()).unwrap(), vec![]);
    }

    #[test]
    fn reads_a_recorded_h100_report() {
        // What driver 580.159.04 printed on an H100 while python3 held
        // 4 GiB in torch (testdata/fixtures/gpu/README.md): the whole
        // report, MIG, clocks, NVLink and all, yields its one process.
        let Some(file) = crate::testdata::testdata("fixtures/gpu/nvidia/h100-q-x.xml") else {
            return;
        };
        let report = std::fs::read(file).unwrap();
        assert_eq!(
            parse(&report).unwrap(),
            vec![(
                2747,
                mem(
                    "GPU-823b4e3d-003f-f673-1bda-769820b57c10",
                    NvidiaUse::Compute,
                    NvidiaUsed::Bytes(4706 << 20)
                )
            )]
        );
    }

    #[test]
    fn garbage_is_one_error() {
        for (text, says) in [
            ("No devices were found\n", "no XML document"),
            ("<html/>", "not an <nvidia_smi_log>"),
            ("<nvidia_smi_log><gpu></gpu></nvidia_smi_log>", "no <uuid>"),
            (
                "<nvidia_smi_log><gpu><uuid>u</uuid><processes><process_info><pid>-1</pid></process_info></processes></gpu></nvidia_smi_log>",
                "no <pid>",
            ),
            (
                "<nvidia_smi_log><gpu><uuid>u</uuid><processes><process_info><pid>1</pid><type>X</type></process_info></processes></gpu></nvidia_smi_log>",
                "unknown <type> Some(\"X\")",
            ),
            (
                "<nvidia_smi_log><gpu><uuid>u</uuid><processes><process_info><pid>1</pid><type>G</type><used_memory>3 GiB</used_memory></process_info></processes></gpu></nvidia_smi_log>",
                "no <used_memory>",
            ),
        ] {
            let e = parse(text.as_bytes()).unwrap_err();
            assert!(e.message.contains(says), "{text}: {e}");
            assert!(e.message.ends_with("NVIDIA figures left out"), "{e}");
            assert!(!e.message.contains('\n'), "{e}");
        }
        assert!(parse(&[0xff, 0xfe]).is_err());
    }
}
