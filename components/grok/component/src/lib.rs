//! drover's built-in grok component. The adapter is the `drover-grok`
//! library; it is exported here, apart from it, because the generic adapter
//! links that library as well.

drover_kit::export!(drover_grok::Grok);
