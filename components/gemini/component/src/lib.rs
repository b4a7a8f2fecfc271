//! drover's built-in gemini component. The adapter is the `drover-gemini`
//! library; it is exported here, apart from it, because the generic adapter
//! links that library as well.

drover_kit::export!(drover_gemini::Gemini);
