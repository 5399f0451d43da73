//! The scene `kernel-lab`.
