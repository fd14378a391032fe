// Page modes. A mode says where questions go and what extra fields its request carries; the
// page shows a switcher when there is more than one. Add a mode by exporting one like
// `askMode` and listing it in app.js. Elements marked `data-mode-only="<id>"` show only in
// that mode. Each mode has its own API key field (`apiKey`): what it is for, and whether the
// mode needs one; a key is kept for the browser tab (sessionStorage), never in the URL. A
// mode's "Try:" buttons are the served knowledge base's own: `examples` names its list in
// `GET /v1/about`'s `examples` (the operator's, from citadel-sources.toml; none, no buttons).

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
  examples: "questions",
  // A follow-up is asked with the thread's earlier questions (kept in the tab's memory).
  threads: true,
  /** The JSON body for a question and the thread's earlier turns (never a tenant: the server
   * takes it from an API key). */
  body(question, history = []) {
    return history.length ? { question, history } : { question };
  },
};

// Customer mode: the support agent (`POST /v1/agent`) answers as the customer whose API key is
// entered. Its reply is not streamed: order facts and the cited policy arrive together. The
// page offers it only when the server has a business database (`customer_support`).
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
  examples: "customer_questions",
  body(question) {
    return { question }; // policy answers come from public documents
  },
};
