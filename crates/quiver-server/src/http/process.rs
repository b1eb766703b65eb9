//! Process figures read from `/proc/self/status` (Linux). Elsewhere they are
//! absent rather than invented.

/// Resident and virtual memory of this process, in bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProcessMemory {
    pub resident_bytes: Option<u64>,
    pub virtual_bytes: Option<u64>,
}

/// Reads the current process memory, or `Default` when it cannot be read.
pub fn memory() -> ProcessMemory {
    std::fs::read_to_string("/proc/self/status")
        .map(|status| parse_status(&status))
        .unwrap_or_default()
}

fn parse_status(status: &str) -> ProcessMemory {
    let kib = |field: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(field))
            .and_then(|rest| rest.trim().strip_suffix("kB"))
            .and_then(|number| number.trim().parse::<u64>().ok())
            .map(|kib| kib * 1024)
    };
    ProcessMemory {
        resident_bytes: kib("VmRSS:"),
        virtual_bytes: kib("VmSize:"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proc_status() {
        let status = "Name:\tquiver\nVmSize:\t  123456 kB\nVmRSS:\t    2048 kB\n";
        assert_eq!(
            parse_status(status),
            ProcessMemory {
                resident_bytes: Some(2048 * 1024),
                virtual_bytes: Some(123_456 * 1024)
            }
        );
        assert_eq!(parse_status("garbage"), ProcessMemory::default());
    }

    #[test]
    fn reads_this_process() {
        assert!(memory().resident_bytes.is_some_and(|bytes| bytes > 0));
    }
}
