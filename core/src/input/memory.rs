//! How much more memory this process may allocate, for the guards that refuse a file before
//! decoding it: the least of the machine's `MemAvailable`, the process's own limits
//! (`RLIMIT_AS` less the address space it already maps, `RLIMIT_DATA` less its data segment)
//! and its cgroup's limit less the cgroup's usage (v2 `memory.max` − `memory.current`, v1
//! `memory.limit_in_bytes` − `memory.usage_in_bytes`). Reading `MemAvailable` alone let a file
//! pass under a 4 GB `ulimit -v` and abort on allocation.
//!
//! The readings are parsed by pure functions ([`Readings::headroom`]) so the rule is tested on
//! given texts; [`headroom`] gathers them from `/proc`, `/sys/fs/cgroup` and `getrlimit`.

/// What bounds the memory available, and by how much.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Headroom {
    /// Bytes this process may still allocate.
    pub bytes: u64,
    /// The limit that gives [`Self::bytes`]: `MemAvailable`, `RLIMIT_AS`, `RLIMIT_DATA` or
    /// `cgroup memory limit`.
    pub bound: &'static str,
}

/// The raw readings (bytes; `None` where unknown or unlimited).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Readings {
    /// `MemAvailable` of `/proc/meminfo`.
    pub mem_available: Option<u64>,
    /// The soft `RLIMIT_AS`.
    pub rlimit_as: Option<u64>,
    /// `VmSize` of `/proc/self/status`: the address space already mapped.
    pub vm_size: Option<u64>,
    /// The soft `RLIMIT_DATA`.
    pub rlimit_data: Option<u64>,
    /// `VmData` of `/proc/self/status`: what `RLIMIT_DATA` counts (heap and private mappings).
    pub vm_data: Option<u64>,
    /// The cgroup's limit (`memory.max`; v1 `memory.limit_in_bytes`).
    pub cgroup_limit: Option<u64>,
    /// The cgroup's usage (`memory.current`; v1 `memory.usage_in_bytes`).
    pub cgroup_usage: Option<u64>,
}

impl Readings {
    /// The least room any known limit leaves (a limit already exceeded leaves 0); `None` when
    /// nothing is known.
    pub fn headroom(&self) -> Option<Headroom> {
        let room = |limit: Option<u64>, used: Option<u64>| {
            limit.map(|l| l.saturating_sub(used.unwrap_or(0)))
        };
        [
            (self.mem_available, "MemAvailable"),
            (room(self.rlimit_as, self.vm_size), "RLIMIT_AS"),
            (room(self.rlimit_data, self.vm_data), "RLIMIT_DATA"),
            (
                room(self.cgroup_limit, self.cgroup_usage),
                "cgroup memory limit",
            ),
        ]
        .into_iter()
        .filter_map(|(b, bound)| b.map(|bytes| Headroom { bytes, bound }))
        .min_by_key(|h| h.bytes)
    }
}

/// A `Key:   1234 kB` line's value of `/proc/meminfo` or `/proc/self/status`, in bytes.
pub fn kib_field(text: &str, key: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.split(':').next() == Some(key))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// A cgroup memory file's number; `None` for `max` (v2: no limit), for v1's "no limit" (a
/// page-rounded `i64::MAX`, anything from 2⁶² up) and for text that is not a number.
pub fn cgroup_number(text: &str) -> Option<u64> {
    text.trim().parse::<u64>().ok().filter(|&v| v < 1 << 62)
}

/// The cgroup folder of this process for the `memory` controller, from `/proc/self/cgroup`:
/// v2's `0::/path` (under `/sys/fs/cgroup`), else v1's `N:…memory…:/path` (under
/// `/sys/fs/cgroup/memory`). Answers the folder and whether it is v2.
pub fn cgroup_dir(self_cgroup: &str) -> Option<(String, bool)> {
    let mut v1 = None;
    for line in self_cgroup.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        if id == "0" && controllers.is_empty() {
            return Some((
                format!("/sys/fs/cgroup{}", path.trim_end_matches('/')),
                true,
            ));
        }
        if controllers.split(',').any(|c| c == "memory") {
            v1 = Some((
                format!("/sys/fs/cgroup/memory{}", path.trim_end_matches('/')),
                false,
            ));
        }
    }
    v1
}

/// This process's readings (Linux: `/proc`, `/sys/fs/cgroup`; Unix: `getrlimit`).
pub fn readings() -> Readings {
    let read = |p: &str| std::fs::read_to_string(p).ok();
    let meminfo = read("/proc/meminfo").unwrap_or_default();
    let status = read("/proc/self/status").unwrap_or_default();
    let (cgroup_limit, cgroup_usage) = read("/proc/self/cgroup")
        .as_deref()
        .and_then(cgroup_dir)
        .map_or((None, None), |(dir, v2)| {
            let (limit, usage) = if v2 {
                ("memory.max", "memory.current")
            } else {
                ("memory.limit_in_bytes", "memory.usage_in_bytes")
            };
            let number = |f: &str| {
                read(&format!("{dir}/{f}"))
                    .as_deref()
                    .and_then(cgroup_number)
            };
            (number(limit), number(usage))
        });
    Readings {
        mem_available: kib_field(&meminfo, "MemAvailable"),
        rlimit_as: rlimit(Resource::AddressSpace),
        vm_size: kib_field(&status, "VmSize"),
        rlimit_data: rlimit(Resource::Data),
        vm_data: kib_field(&status, "VmData"),
        cgroup_limit,
        cgroup_usage,
    }
}

/// The memory this process may still allocate ([`Readings::headroom`] of [`readings`]).
pub fn headroom() -> Option<Headroom> {
    readings().headroom()
}

/// The limits read through `getrlimit`.
#[derive(Clone, Copy)]
enum Resource {
    AddressSpace,
    Data,
}

/// The soft limit on `r` in bytes; `None` when unlimited or unknown.
#[cfg(unix)]
fn rlimit(r: Resource) -> Option<u64> {
    let resource = match r {
        Resource::AddressSpace => libc::RLIMIT_AS,
        Resource::Data => libc::RLIMIT_DATA,
    };
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `getrlimit` writes one `rlimit` through a pointer to a live, owned value.
    #[allow(unsafe_code)]
    let rc = unsafe { libc::getrlimit(resource, &mut lim) };
    if rc != 0 || lim.rlim_cur == libc::RLIM_INFINITY {
        return None;
    }
    // `rlim_t` is `u64` here but narrower on some 32-bit targets.
    #[allow(clippy::useless_conversion)]
    u64::try_from(lim.rlim_cur).ok()
}

/// Not known off Unix.
#[cfg(not(unix))]
fn rlimit(_: Resource) -> Option<u64> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const G: u64 = 1 << 30;

    #[test]
    fn the_least_room_wins_and_names_its_limit() {
        let meminfo = "MemTotal:       24000000 kB\nMemAvailable:   20971520 kB\n";
        let status = "Name:\twarpscope\nVmSize:\t  1048576 kB\nVmData:\t   524288 kB\n";
        // 20 GiB available; a 4 GiB `ulimit -v` with 1 GiB mapped leaves 3 GiB.
        let mut r = Readings {
            mem_available: kib_field(meminfo, "MemAvailable"),
            rlimit_as: Some(4 * G),
            vm_size: kib_field(status, "VmSize"),
            rlimit_data: None,
            vm_data: kib_field(status, "VmData"),
            cgroup_limit: None,
            cgroup_usage: None,
        };
        assert_eq!(r.mem_available, Some(20 * G));
        assert_eq!(r.vm_data, Some(G / 2));
        assert_eq!(
            r.headroom(),
            Some(Headroom {
                bytes: 3 * G,
                bound: "RLIMIT_AS"
            })
        );
        // A cgroup of 2 GiB using 1.5 GiB leaves 0.5 GiB: less again.
        r.cgroup_limit = cgroup_number("2147483648\n");
        r.cgroup_usage = cgroup_number("1610612736\n");
        assert_eq!(
            r.headroom(),
            Some(Headroom {
                bytes: G / 2,
                bound: "cgroup memory limit"
            })
        );
        // RLIMIT_DATA of 0.25 GiB with 0.5 GiB already used: nothing left.
        r.rlimit_data = Some(G / 4);
        assert_eq!(
            r.headroom().map(|h| (h.bytes, h.bound)),
            Some((0, "RLIMIT_DATA"))
        );
        assert_eq!(Readings::default().headroom(), None);
    }

    #[test]
    fn cgroup_files_and_paths_are_read_as_the_kernel_writes_them() {
        assert_eq!(cgroup_number("max\n"), None);
        // v1's "no limit": 9223372036854771712 (i64::MAX rounded down to a page).
        assert_eq!(cgroup_number("9223372036854771712\n"), None);
        assert_eq!(cgroup_number("536870912\n"), Some(512 << 20));
        assert_eq!(
            cgroup_dir("0::/user.slice/session-1.scope\n"),
            Some(("/sys/fs/cgroup/user.slice/session-1.scope".into(), true))
        );
        assert_eq!(cgroup_dir("0::/\n"), Some(("/sys/fs/cgroup".into(), true)));
        assert_eq!(
            cgroup_dir("12:cpu,cpuacct:/a\n4:memory:/docker/abc\n"),
            Some(("/sys/fs/cgroup/memory/docker/abc".into(), false))
        );
        assert_eq!(cgroup_dir("garbage"), None);
        // `VmSize` is not `VmSizeX`: the key is matched whole.
        assert_eq!(
            kib_field("VmSizeX: 1 kB\nVmSize: 2 kB\n", "VmSize"),
            Some(2048)
        );
    }
}
