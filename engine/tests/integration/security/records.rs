//! (filled in by the records work)
