// Page modes. A mode says where questions go and what extra fields its request carries; the
// page shows a switcher when there is more than one. Add a mode by exporting one like
// `askMode` and listing it in app.js. Elements marked `data-mode-only="<id>"` show only in
// that mode. Each mode has its own API key field (`apiKey`): what it is for, and whether the
// mode needs one; a key is kept for the browser tab (sessionStorage), never in the URL.

export const askMode = {
  id: "ask",
  label: "Knowledge base",
  placeholder: "Ask a question about the knowledge base…",
  streamUrl: "/v1/answer/stream",
  // A knowledge-base key ([api_keys] in the settings): the server requires one when
  // `open_answers = false`, and a tenant's key also shows that tenant's documents.
  apiKey: {
    required: false,
    placeholder: "only if this server requires one",
  },
  examples: [
    "How long do I have to return an item?",
    "How much does express delivery cost?",
    "How long are gift cards valid?",
    "What is the capital of France?",
  ],
  /** The JSON body for a question (never a tenant: the server takes it from an API key). */
  body(question) {
    return { question };
  },
};

// Customer mode: the support agent (`POST /v1/agent`) answers as the customer whose API key is
// entered. Its reply is not streamed: order facts and the cited policy arrive together.
export const customerMode = {
  id: "customer",
  label: "Customer support",
  placeholder: "Ask about your orders or our returns policy…",
  agentUrl: "/v1/agent",
  // The customer's key: the agent answers about that customer's orders.
  apiKey: {
    required: true,
    placeholder: "cit_… (`citadel demo-data` prints demo keys)",
  },
  examples: [
    "Can I get a refund for order 1042?",
    "Where is order 1045?",
    "What are my orders?",
    "How long do I have to return an item?",
  ],
  body(question) {
    return { question }; // policy answers come from public documents
  },
};
