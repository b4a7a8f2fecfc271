//! drover's built-in copilot component. The adapter is the `drover-copilot`
//! library; it is exported here, apart from it, because the generic adapter
//! links that library as well.

drover_kit::export!(drover_copilot::Copilot);
