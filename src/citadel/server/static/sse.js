// Server-Sent Events over a POST request: EventSource can only GET, so this reads the
// response body with fetch + ReadableStream and parses the event-stream format itself.

/**
 * POST `body` as JSON to `url` (with extra `headers`, e.g. an API key's) and call
 * `onEvent(type, data)` for each event. Resolves when the stream ends; rejects on HTTP
 * errors (with the server's JSON message and `status`) and on abort (`signal`).
 */
export async function postEventStream(url, body, { onEvent, signal, headers = {} } = {}) {
  const response = await fetch(url, {
    method: "POST",
    headers: { ...headers, "Content-Type": "application/json", Accept: "text/event-stream" },
    body: JSON.stringify(body),
    signal,
  });
  if (!response.ok) {
    let message = `HTTP ${response.status}`;
    try {
      const payload = await response.json();
      message = payload?.error?.message || message;
    } catch (_) { /* not JSON */ }
    const error = new Error(message);
    error.status = response.status;
    throw error;
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  const parser = new EventStreamParser(onEvent);
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    parser.push(value);
  }
  parser.end();
}

/** Incremental parser of the text/event-stream format (event, data; id/retry ignored). */
export class EventStreamParser {
  constructor(onEvent) {
    this.onEvent = onEvent;
    this.buffer = "";
    this.type = "";
    this.data = [];
  }

  push(text) {
    this.buffer += text;
    const lines = this.buffer.split("\n");
    this.buffer = lines.pop(); // an incomplete last line waits for more text
    for (const line of lines) this.line(line.endsWith("\r") ? line.slice(0, -1) : line);
  }

  end() {
    if (this.buffer) this.line(this.buffer);
    this.line("");
  }

  line(line) {
    if (line === "") {
      if (this.data.length) {
        const raw = this.data.join("\n");
        let data = raw;
        try { data = JSON.parse(raw); } catch (_) { /* leave as text */ }
        this.onEvent(this.type || "message", data);
      }
      this.type = "";
      this.data = [];
      return;
    }
    if (line.startsWith(":")) return; // comment / keep-alive
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") this.type = value;
    else if (field === "data") this.data.push(value);
  }
}
