//! drover's built-in muse component. The adapter is the `drover-muse`
//! library; it is exported here, apart from it, as every built-in is.

drover_kit::export!(drover_muse::Muse);
