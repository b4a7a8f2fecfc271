//! (filled in by the terminal work)
