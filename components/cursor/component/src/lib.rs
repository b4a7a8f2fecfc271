//! drover's built-in cursor component. The adapter is the `drover-cursor`
//! library; it is exported here, apart from it, because the generic adapter
//! links that library as well.

drover_kit::export!(drover_cursor::Cursor);
