//! (filled in by the launch work)
