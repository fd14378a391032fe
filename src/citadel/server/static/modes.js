// Page modes. A mode says where questions go and what extra fields its request carries; the
// page shows a switcher when there is more than one. Add a mode by exporting one like
// `askMode` and listing it in app.js.

export const askMode = {
  id: "ask",
  label: "Knowledge base",
  placeholder: "Ask a question about the knowledge base…",
  streamUrl: "/v1/answer/stream",
  examples: [
    "How long do I have to return an item?",
    "How much does express delivery cost?",
    "How long are gift cards valid?",
    "What is the capital of France?",
  ],
  /** The JSON body for a question. */
  body(question) {
    return { question };
  },
  /** Tenant whose documents the source panel may show (none: public documents only). */
  tenant() {
    return null;
  },
};
