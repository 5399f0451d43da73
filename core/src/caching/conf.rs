//! `PYTORCH_CUDA_ALLOC_CONF` text (`key:value,key:value`, lists in brackets) read as PyTorch's
//! parser reads it (`AcceleratorAllocatorConfig::parseArgs` and `CUDAAllocatorConfig::parseArgs`,
//! tokenised as `ConfigTokenizer` does: `,` `:` `[` `]` are tokens, white space is dropped), with
//! each setting's validation written once here ([`max_split_size_mb`], [`large_segment_size_mb`],
//! [`garbage_collection_threshold`], [`roundup_division`], [`roundup_interval`],
//! [`pinned_num_register_threads`], [`pinned_reserve_segment_size_mb`], [`flag`], [`backend`]);
//! the scene's own parameters use the same functions.
//!
//! Every key PyTorch's parser accepts is accepted. Those that change what the simulator does:
//! `expandable_segments`, `max_split_size_mb`, `max_non_split_rounding_mb`,
//! `roundup_power2_divisions`, `garbage_collection_threshold`. The rest (`backend`,
//! `large_segment_size_mb`, `release_lock_on_cudamalloc`/`_hipmalloc`,
//! `pinned_use_cuda_host_register`/`_hip_`, `pinned_num_register_threads`,
//! `pinned_reserve_segment_size_mb`, `pinned_use_background_threads`,
//! `graph_capture_record_stream_reuse`) are validated and listed in
//! [`AllocConf::not_simulated`].

use super::config::ROUNDUP_INTERVALS;
use crate::text::Text;

/// Keys that change nothing the simulator models (host/pinned memory, locking, the allocator
/// backend, the large segment size).
const NOT_SIMULATED: &[&str] = &[
    "backend",
    "large_segment_size_mb",
    "release_lock_on_cudamalloc",
    "release_lock_on_hipmalloc",
    "pinned_use_cuda_host_register",
    "pinned_use_hip_host_register",
    "pinned_num_register_threads",
    "pinned_reserve_segment_size_mb",
    "pinned_use_background_threads",
    "graph_capture_record_stream_reuse",
];

/// Keys that the simulator models.
const SIMULATED: &[&str] = &[
    "expandable_segments",
    "max_split_size_mb",
    "max_non_split_rounding_mb",
    "roundup_power2_divisions",
    "garbage_collection_threshold",
];

/// The settings an allocator-configuration text sets (`None`: not given).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AllocConf {
    /// `expandable_segments`.
    pub expandable_segments: Option<bool>,
    /// `max_split_size_mb` (MiB).
    pub max_split_size_mb: Option<u64>,
    /// `max_non_split_rounding_mb` (MiB).
    pub max_non_split_rounding_mb: Option<u64>,
    /// `roundup_power2_divisions`, per power-of-two interval from 1 MiB.
    pub roundup_power2_divisions: Option<[u64; ROUNDUP_INTERVALS]>,
    /// `garbage_collection_threshold`.
    pub garbage_collection_threshold: Option<f64>,
    /// Keys given that the simulator does not model, in the order given.
    pub not_simulated: Vec<String>,
}

/// A value PyTorch would refuse: the key and what it accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfError {
    /// The key (or `alloc_conf` for the text's syntax).
    pub key: String,
    /// The value as written.
    pub value: String,
    /// What is accepted, in both languages (a noun phrase: `a power of two`).
    pub expected: Text,
}

/// A setting's value, or what the setting accepts (in both languages) when it refuses it.
pub type Rule<T> = Result<T, Text>;

/// A fixed wording of what a setting accepts.
fn words(en: &str, zh: &str) -> Text {
    Text::new(en.to_owned(), zh.to_owned())
}

/// `max_split_size_mb` and `max_non_split_rounding_mb` (`parseMaxSplitSize`,
/// `parseMaxNonSplitRoundingSize`): MiB above `kLargeBuffer` (20 MiB).
pub fn max_split_size_mb(v: u64) -> Rule<u64> {
    if v > super::LARGE_BUFFER >> 20 {
        Ok(v)
    } else {
        Err(words(
            "more than 20 (MiB; PyTorch refuses 20 MiB or less)",
            "大于 20 的数（MiB；PyTorch 拒绝 20 MiB 及以下）",
        ))
    }
}

/// `large_segment_size_mb` (`parseLargeSegmentSize`): MiB above `kMinLargeAlloc` (10 MiB).
pub fn large_segment_size_mb(v: u64) -> Rule<u64> {
    if v > super::MIN_LARGE_ALLOC >> 20 {
        Ok(v)
    } else {
        Err(words("more than 10 (MiB)", "大于 10 的数（MiB）"))
    }
}

/// `garbage_collection_threshold` (`parseGarbageCollectionThreshold`): a fraction in (0, 1).
pub fn garbage_collection_threshold(v: f64) -> Rule<f64> {
    if v > 0.0 && v < 1.0 {
        Ok(v)
    } else {
        Err(words(
            "a fraction above 0 and below 1",
            "大于 0 且小于 1 的比例",
        ))
    }
}

/// `roundup_power2_divisions` divisions (`parseRoundUpPower2Divisions`): 0 (off) or a power of
/// two; `single` (the one-number form) refuses 0.
pub fn roundup_division(v: u64, single: bool) -> Rule<u64> {
    if v.is_power_of_two() || (v == 0 && !single) {
        Ok(v)
    } else if single {
        Err(words("a power of two", "2 的幂"))
    } else {
        Err(words("0 (off) or a power of two", "0（关闭）或 2 的幂"))
    }
}

/// `roundup_power2_divisions` interval starts (`parseRoundUpPower2Divisions`): a power of two
/// (MiB); answers its interval, clamped to the 16.
pub fn roundup_interval(v: u64) -> Rule<usize> {
    if v.is_power_of_two() {
        Ok((v.trailing_zeros() as usize).min(ROUNDUP_INTERVALS - 1))
    } else {
        Err(words("a power of two (MiB) or >", "2 的幂（MiB）或 >"))
    }
}

/// `pinned_num_register_threads` (`parsePinnedNumRegisterThreads`): a power of two, at most
/// 128 (`pinned_max_register_threads`).
pub fn pinned_num_register_threads(v: u64) -> Rule<u64> {
    if v.is_power_of_two() && v <= 128 {
        Ok(v)
    } else {
        Err(words("a power of two, at most 128", "不大于 128 的 2 的幂"))
    }
}

/// `pinned_reserve_segment_size_mb` (`parsePinnedReserveSegmentSize`): more than 0.
pub fn pinned_reserve_segment_size_mb(v: u64) -> Rule<u64> {
    if v > 0 {
        Ok(v)
    } else {
        Err(words("more than 0", "大于 0 的数"))
    }
}

/// A flag (`ConfigTokenizer::toBool`): `True` or `False`, spelled so.
pub fn flag(v: &str) -> Rule<bool> {
    match v {
        "True" => Ok(true),
        "False" => Ok(false),
        _ => Err(words("True or False", "True 或 False")),
    }
}

/// `backend` (`CUDAAllocatorConfig::parseAllocatorConfig`): `native` or `cudaMallocAsync`.
pub fn backend(v: &str) -> Rule<()> {
    match v {
        "native" | "cudaMallocAsync" => Ok(()),
        _ => Err(words(
            "native or cudaMallocAsync",
            "native 或 cudaMallocAsync",
        )),
    }
}

/// Whole tokens: `,` `:` `[` `]` alone, the text between them without white space.
fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut buf = String::new();
    for c in text.chars() {
        if matches!(c, ',' | ':' | '[' | ']') {
            if !buf.is_empty() {
                out.push(std::mem::take(&mut buf));
            }
            out.push(c.to_string());
        } else if !c.is_whitespace() {
            buf.push(c);
        }
    }
    if !buf.is_empty() {
        out.push(buf);
    }
    out
}

struct Cursor<'a> {
    t: &'a [String],
    i: usize,
}

impl Cursor<'_> {
    fn next(&mut self) -> Option<&str> {
        let s = self.t.get(self.i).map(String::as_str);
        self.i += 1;
        s
    }

    fn expect(&mut self, key: &str, token: &str) -> Result<(), ConfError> {
        match self.next() {
            Some(t) if t == token => Ok(()),
            other => Err(err(
                key,
                other.unwrap_or(""),
                words(&format!("'{token}'"), &format!("'{token}'")),
            )),
        }
    }

    fn value(&mut self, key: &str) -> Result<String, ConfError> {
        match self.next() {
            Some(v) if !matches!(v, "," | ":" | "[" | "]") => Ok(v.to_owned()),
            other => Err(err(key, other.unwrap_or(""), words("a value", "一个值"))),
        }
    }
}

fn err(key: &str, value: &str, expected: Text) -> ConfError {
    ConfError {
        key: key.to_owned(),
        value: value.to_owned(),
        expected,
    }
}

fn number(key: &str, v: &str) -> Result<u64, ConfError> {
    v.parse::<u64>()
        .map_err(|_| err(key, v, words("a non-negative integer", "非负整数")))
}

fn check<T>(key: &str, v: &str, rule: Rule<T>) -> Result<T, ConfError> {
    rule.map_err(|e| err(key, v, e))
}

/// Reads an allocator-configuration text (see the module docs); empty text sets nothing.
///
/// # Errors
/// [`ConfError`] naming the key (an unknown one among them, with the keys accepted) and what
/// it accepts.
pub fn parse(text: &str) -> Result<AllocConf, ConfError> {
    let t = tokens(text);
    let mut c = Cursor { t: &t, i: 0 };
    let mut out = AllocConf::default();
    while let Some(key) = c.next().map(str::to_owned) {
        let k = key.as_str();
        if !SIMULATED.contains(&k) && !NOT_SIMULATED.contains(&k) {
            let mut known: Vec<&str> = SIMULATED.iter().chain(NOT_SIMULATED).copied().collect();
            known.sort_unstable();
            return Err(err(
                "alloc_conf",
                k,
                Text::new(
                    format!("a key PyTorch accepts: {}", known.join(", ")),
                    format!("PyTorch 接受的键：{}", known.join(", ")),
                ),
            ));
        }
        c.expect(k, ":")?;
        if k == "roundup_power2_divisions" {
            out.roundup_power2_divisions = Some(divisions(&mut c)?);
        } else {
            let v = c.value(k)?;
            let v = v.as_str();
            match k {
                "expandable_segments" => out.expandable_segments = Some(check(k, v, flag(v))?),
                "max_split_size_mb" | "max_non_split_rounding_mb" => {
                    let mb = check(k, v, max_split_size_mb(number(k, v)?))?;
                    if k == "max_split_size_mb" {
                        out.max_split_size_mb = Some(mb);
                    } else {
                        out.max_non_split_rounding_mb = Some(mb);
                    }
                }
                "garbage_collection_threshold" => {
                    let g = v.parse::<f64>().map_err(|_| {
                        err(
                            k,
                            v,
                            words("a fraction above 0 and below 1", "大于 0 且小于 1 的比例"),
                        )
                    })?;
                    out.garbage_collection_threshold =
                        Some(check(k, v, garbage_collection_threshold(g))?);
                }
                "large_segment_size_mb" => {
                    check(k, v, large_segment_size_mb(number(k, v)?))?;
                }
                "pinned_num_register_threads" => {
                    check(k, v, pinned_num_register_threads(number(k, v)?))?;
                }
                "pinned_reserve_segment_size_mb" => {
                    check(k, v, pinned_reserve_segment_size_mb(number(k, v)?))?;
                }
                "backend" => check(k, v, backend(v))?,
                _ => {
                    check(k, v, flag(v))?;
                }
            }
        }
        if NOT_SIMULATED.contains(&k) {
            out.not_simulated.push(key.clone());
        }
        match c.next() {
            None => break,
            Some(",") => {}
            Some(other) => {
                return Err(err(
                    k,
                    other,
                    words("',' before the next key", "下一个键之前的 ','"),
                ));
            }
        }
    }
    Ok(out)
}

/// `roundup_power2_divisions`' value: one number for every interval, or `[start:divisions,…]`
/// with interval starts in MiB and `>` for every interval after the last one named; the first
/// entry also sets every interval before it (`parseRoundUpPower2Divisions`).
fn divisions(c: &mut Cursor<'_>) -> Result<[u64; ROUNDUP_INTERVALS], ConfError> {
    const K: &str = "roundup_power2_divisions";
    let mut d = [0u64; ROUNDUP_INTERVALS];
    if c.t.get(c.i).map(String::as_str) != Some("[") {
        let v = c.value(K)?;
        let n = check(K, &v, roundup_division(number(K, &v)?, true))?;
        return Ok([n; ROUNDUP_INTERVALS]);
    }
    c.next();
    let (mut first, mut last) = (true, 0usize);
    loop {
        let start = c.value(K)?;
        c.expect(K, ":")?;
        let v = c.value(K)?;
        let n = check(K, &v, roundup_division(number(K, &v)?, false))?;
        if start == ">" {
            for slot in d.iter_mut().skip(last + 1) {
                *slot = n;
            }
        } else {
            let index = check(K, &start, roundup_interval(number(K, &start)?))?;
            if first {
                for slot in d.iter_mut().take(index) {
                    *slot = n;
                }
                first = false;
            }
            if let Some(slot) = d.get_mut(index) {
                *slot = n;
            }
            last = index;
        }
        match c.next() {
            Some("]") => return Ok(d),
            Some(",") => {}
            other => {
                return Err(err(
                    K,
                    other.unwrap_or(""),
                    words("',' or ']'", "',' 或 ']'"),
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pytorchs_example_and_every_setting_the_simulator_models() {
        let c = parse(
            "expandable_segments:True,max_split_size_mb:128,roundup_power2_divisions:4,garbage_collection_threshold:0.6",
        )
        .unwrap();
        assert_eq!(c.expandable_segments, Some(true));
        assert_eq!(c.max_split_size_mb, Some(128));
        assert_eq!(c.roundup_power2_divisions, Some([4; ROUNDUP_INTERVALS]));
        assert_eq!(c.garbage_collection_threshold, Some(0.6));
        assert!(c.not_simulated.is_empty());
        // White space is dropped, as the tokenizer drops it; empty text sets nothing.
        let c = parse(" max_non_split_rounding_mb : 64 , expandable_segments:False").unwrap();
        assert_eq!(
            (c.max_non_split_rounding_mb, c.expandable_segments),
            (Some(64), Some(false))
        );
        assert_eq!(parse("").unwrap(), AllocConf::default());
    }

    #[test]
    fn the_list_form_of_roundup_divisions() {
        // 64 MiB is interval 6: it and every interval before it get 8; 256 → interval 8 gets 4
        // (7 stays 0); 1024 → interval 10 gets 4; `>` sets 11 to 15 to 1.
        let c = parse("roundup_power2_divisions:[64:8,256:4,1024:4,>:1]").unwrap();
        assert_eq!(
            c.roundup_power2_divisions,
            Some([8, 8, 8, 8, 8, 8, 8, 0, 4, 0, 4, 1, 1, 1, 1, 1])
        );
    }

    #[test]
    fn keys_the_simulator_does_not_model_are_checked_and_listed() {
        let c = parse(
            "backend:cudaMallocAsync,pinned_num_register_threads:8,release_lock_on_cudamalloc:True,large_segment_size_mb:40",
        )
        .unwrap();
        assert_eq!(
            c.not_simulated,
            vec![
                "backend",
                "pinned_num_register_threads",
                "release_lock_on_cudamalloc",
                "large_segment_size_mb"
            ]
        );
    }

    #[test]
    fn what_pytorch_refuses_is_refused_naming_the_key() {
        for (text, key, value) in [
            ("foo:1", "alloc_conf", "foo"),
            ("expandable_segments:true", "expandable_segments", "true"),
            ("expandable_segments:1", "expandable_segments", "1"),
            ("max_split_size_mb:20", "max_split_size_mb", "20"),
            (
                "max_non_split_rounding_mb:8",
                "max_non_split_rounding_mb",
                "8",
            ),
            (
                "garbage_collection_threshold:1.0",
                "garbage_collection_threshold",
                "1.0",
            ),
            (
                "garbage_collection_threshold:0",
                "garbage_collection_threshold",
                "0",
            ),
            (
                "roundup_power2_divisions:3",
                "roundup_power2_divisions",
                "3",
            ),
            (
                "roundup_power2_divisions:0",
                "roundup_power2_divisions",
                "0",
            ),
            (
                "roundup_power2_divisions:[3:4]",
                "roundup_power2_divisions",
                "3",
            ),
            (
                "roundup_power2_divisions:[4:3]",
                "roundup_power2_divisions",
                "3",
            ),
            (
                "pinned_num_register_threads:256",
                "pinned_num_register_threads",
                "256",
            ),
            (
                "pinned_reserve_segment_size_mb:0",
                "pinned_reserve_segment_size_mb",
                "0",
            ),
            ("large_segment_size_mb:10", "large_segment_size_mb", "10"),
            ("backend:magic", "backend", "magic"),
            ("max_split_size_mb:-5", "max_split_size_mb", "-5"),
            ("max_split_size_mb", "max_split_size_mb", ""),
            (
                "max_split_size_mb:64 expandable_segments:True",
                "max_split_size_mb",
                "64expandable_segments",
            ),
        ] {
            let e = parse(text).unwrap_err();
            assert_eq!((e.key.as_str(), e.value.as_str()), (key, value), "{text}");
        }
        // An unknown key's error lists the ones accepted.
        assert!(
            parse("foo:1")
                .unwrap_err()
                .expected
                .en
                .contains("max_split_size_mb")
        );
        assert!(max_split_size_mb(21).is_ok());
    }
}
