//! What the window keeps between runs: the language, the theme, the recent snapshot files and
//! the last scene, as a small JSON file in the platform's configuration folder
//! (`$XDG_CONFIG_HOME/warpscope/window.json`, else `~/.config/warpscope/window.json`).
//!
//! The file is written (atomically) whenever one of them changes, so a crash loses nothing.
//! Reading it never stands in the way of the window: a missing, unreadable, oversized or corrupt
//! file, or a value in it that is no longer valid (a removed scene, an unknown theme), gives the
//! defaults for that value, and the next change writes a good file over it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::WarpscopeApp;

/// Largest state file read: a few hundred bytes in practice.
const MAX_BYTES: u64 = 64 * 1024;

/// The kept state, as the file spells it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Prefs {
    /// `en` or `zh`.
    pub lang: Option<String>,
    /// One of `warpscope_core::session::THEMES`.
    pub theme: Option<String>,
    /// Snapshot files opened recently, most recent first.
    pub recent: Vec<PathBuf>,
    /// The scene on screen at the last change.
    pub scene: Option<String>,
}

/// The state file's path from the environment's `XDG_CONFIG_HOME` and `HOME` (`None` when
/// neither is set: nothing is kept).
pub fn path_from(xdg_config_home: Option<OsString>, home: Option<OsString>) -> Option<PathBuf> {
    // The XDG rule: a relative XDG_CONFIG_HOME is invalid and ignored.
    let base = xdg_config_home
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            home.map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .map(|h| h.join(".config"))
        })?;
    Some(base.join("warpscope").join("window.json"))
}

/// The state file of this user ([`path_from`] with this process's environment).
pub fn path() -> Option<PathBuf> {
    path_from(
        std::env::var_os("XDG_CONFIG_HOME"),
        std::env::var_os("HOME"),
    )
}

/// Reads the state at `path`: the defaults where the file is missing, unreadable or corrupt.
pub fn load(path: &Path) -> Prefs {
    warpscope_core::input::read_regular(path, MAX_BYTES, "window state")
        .ok()
        .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok())
        .map(|v| {
            // Field by field: one wrong value does not cost the others.
            let field = |k: &str| v.get(k).cloned().unwrap_or_default();
            Prefs {
                lang: serde_json::from_value(field("lang")).unwrap_or_default(),
                theme: serde_json::from_value(field("theme")).unwrap_or_default(),
                recent: serde_json::from_value(field("recent")).unwrap_or_default(),
                scene: serde_json::from_value(field("scene")).unwrap_or_default(),
            }
        })
        .unwrap_or_default()
}

/// Writes `prefs` to `path` atomically, creating its folder.
///
/// # Errors
/// Why the folder or the file could not be written.
pub fn save(path: &Path, prefs: &Prefs) -> Result<(), String> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let text = serde_json::to_string_pretty(prefs).map_err(|e| e.to_string())?;
    crate::export::write_atomically(path, text.as_bytes()).map_err(|e| e.to_string())
}

impl WarpscopeApp {
    /// The state to keep, as the window is now.
    pub fn prefs(&self) -> Prefs {
        Prefs {
            lang: Some(if self.zh { "zh" } else { "en" }.to_owned()),
            theme: Some(crate::theme::name(self.theme).to_owned()),
            recent: self.opener.recent.clone(),
            scene: Some(self.selected.to_owned()),
        }
    }

    /// Takes the kept language, theme and recent files, each only when valid (the scene is
    /// chosen when the window is made: [`WarpscopeApp::new`]).
    pub fn apply_prefs(&mut self, prefs: &Prefs) {
        match prefs.lang.as_deref() {
            Some("zh") => self.zh = true,
            Some("en") => self.zh = false,
            _ => {}
        }
        if let Some(t) = prefs.theme.as_deref().and_then(crate::theme::from_name) {
            self.theme = t;
        }
        self.opener.recent = prefs
            .recent
            .iter()
            .take(super::open::RECENT)
            .cloned()
            .collect();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_path_follows_xdg_then_home() {
        assert_eq!(
            path_from(Some("/x/cfg".into()), Some("/home/u".into())),
            Some(PathBuf::from("/x/cfg/warpscope/window.json"))
        );
        assert_eq!(
            path_from(Some("relative".into()), Some("/home/u".into())),
            Some(PathBuf::from("/home/u/.config/warpscope/window.json"))
        );
        assert_eq!(path_from(None, None), None);
    }

    #[test]
    fn the_state_round_trips_and_a_corrupt_file_gives_the_defaults() {
        let dir = tempfile::tempdir().expect("temp dir");
        let p = dir.path().join("warpscope").join("window.json");
        assert_eq!(load(&p), Prefs::default(), "no file yet");
        let kept = Prefs {
            lang: Some("zh".into()),
            theme: Some("light".into()),
            recent: vec!["/data/run.pickle".into()],
            scene: Some("banks".into()),
        };
        save(&p, &kept).expect("writes");
        assert_eq!(load(&p), kept);
        for corrupt in [&b"{\"lang\": "[..], b"\xff\xfe", b"[1, 2]", b""] {
            std::fs::write(&p, corrupt).expect("writes");
            assert_eq!(load(&p), Prefs::default(), "{corrupt:?}");
        }
        // One wrong value costs only itself.
        std::fs::write(&p, r#"{"lang": 7, "theme": "dark", "recent": "x"}"#).expect("writes");
        let got = load(&p);
        assert_eq!((got.lang, got.theme.as_deref()), (None, Some("dark")));
        assert!(got.recent.is_empty());
        // A folder where the file should be: the defaults.
        std::fs::remove_file(&p).expect("removes");
        std::fs::create_dir(&p).expect("makes");
        assert_eq!(load(&p), Prefs::default());
    }

    #[test]
    fn the_window_takes_valid_values_only() {
        let mut app = WarpscopeApp::new(None);
        app.apply_prefs(&Prefs {
            lang: Some("zh".into()),
            theme: Some("slides".into()),
            recent: (0..20)
                .map(|i| PathBuf::from(format!("/r{i}.pickle")))
                .collect(),
            scene: None,
        });
        assert!(app.zh);
        assert_eq!(app.theme, crate::theme::Theme::Slides);
        assert_eq!(app.opener.recent.len(), super::super::open::RECENT);
        assert_eq!(app.opener.recent[0], PathBuf::from("/r0.pickle"));
        app.apply_prefs(&Prefs {
            lang: Some("fr".into()),
            theme: Some("neon".into()),
            ..Prefs::default()
        });
        assert!(app.zh, "an unknown language leaves it");
        assert_eq!(app.theme, crate::theme::Theme::Slides);
        let p = app.prefs();
        assert_eq!(p.lang.as_deref(), Some("zh"));
        assert_eq!(p.theme.as_deref(), Some("slides"));
        assert_eq!(p.scene.as_deref(), Some("reduction"));
    }
}
