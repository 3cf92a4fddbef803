/* Campus MCP apps: the host bridge (MCP Apps, protocol 2026-01-26) and the time helpers.
   A view calls App.start({ name, render }); render(data, result) returns a Node, or throws
   App.unreadable(...) for a result it cannot draw. Whatever happens, the page says something
   in words: a blank frame tells a student nothing. */
const App = (() => {
  const PROTOCOL = "2026-01-26";
  const VERSION = "0.1.0";
  const DAYS = { M: "Mon", T: "Tue", W: "Wed", R: "Thu", F: "Fri", S: "Sat", U: "Sun" };
  const DAY_NAMES = { M: "Monday", T: "Tuesday", W: "Wednesday", R: "Thursday", F: "Friday", S: "Saturday", U: "Sunday" };
  const SOURCES = {
    sections: ["Section data", "last refreshed"],
    finals: ["The finals schedule", "was last loaded"],
    course_details: ["Course details", "last refreshed"],
    university_calendar: ["The university calendar (holidays, term dates, deadlines)", "was last loaded"],
    degree_requirements: ["Degree requirements", "were last loaded"],
  };
  // A source this view does not know by name is named in words, never by its key.
  const sourceWords = (key) => String(key || "Data").replace(/_/g, " ").replace(/^./, (c) => c.toUpperCase());
  const state = { context: {}, input: null, result: null, phase: "waiting", reason: "", connected: false };
  const pending = new Map();
  let nextId = 1;
  let spec = null;
  let main = null;
  let observer = null;
  let lastSize = "";

  class Unreadable extends Error {}

  // --- the wire: JSON-RPC 2.0 over postMessage with the host (the parent window) ---
  function post(message) {
    window.parent.postMessage({ jsonrpc: "2.0", ...message }, "*");
  }
  function request(method, params) {
    const id = nextId++;
    post({ id, method, params });
    return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
  }
  function notify(method, params) {
    post({ method, params: params || {} });
  }

  window.addEventListener("message", (event) => {
    if (event.source !== window.parent) return;
    const m = event.data;
    if (!m || typeof m !== "object" || m.jsonrpc !== "2.0") return;
    if (m.method === undefined) {
      const waiting = pending.get(m.id);
      if (!waiting) return;
      pending.delete(m.id);
      if (m.error) waiting.reject(m.error);
      else waiting.resolve(m.result || {});
      return;
    }
    const params = m.params || {};
    switch (m.method) {
      case "ui/notifications/tool-input":
        state.input = params.arguments || null;
        if (!state.result) show();
        break;
      case "ui/notifications/tool-result":
        state.result = params;
        state.phase = "result";
        show();
        break;
      case "ui/notifications/tool-cancelled":
        state.phase = "cancelled";
        state.reason = typeof params.reason === "string" ? params.reason : "";
        show();
        break;
      case "ui/notifications/host-context-changed":
        applyContext(params);
        show();
        break;
      case "ui/resource-teardown":
        // The host is about to remove the frame: stop watching the size, then say we are done.
        if (observer) observer.disconnect();
        state.phase = "closed";
        post({ id: m.id, result: {} });
        break;
      case "ping":
        post({ id: m.id, result: {} });
        break;
      default:
        if (m.id !== undefined) post({ id: m.id, error: { code: -32601, message: `Unknown method ${m.method}` } });
    }
  });

  function applyContext(changes) {
    state.context = { ...state.context, ...changes };
    const root = document.documentElement;
    const theme = state.context.theme;
    if (theme === "light" || theme === "dark") root.dataset.theme = theme;
    else delete root.dataset.theme;
    const variables = (changes.styles && changes.styles.variables) || null;
    if (variables) {
      for (const [name, value] of Object.entries(variables)) {
        if (!name.startsWith("--")) continue;
        if (typeof value === "string" && value) root.style.setProperty(name, value);
        else root.style.removeProperty(name);
      }
    }
  }

  function reportSize() {
    const root = document.documentElement;
    const size = { width: Math.ceil(root.scrollWidth), height: Math.ceil(root.scrollHeight) };
    const key = `${size.width}x${size.height}`;
    if (key === lastSize || !state.connected) return;
    lastSize = key;
    notify("ui/notifications/size-changed", size);
  }

  // --- drawing: every state of the page is a sentence, never an empty frame ---
  function h(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "class") node.className = value;
      else if (key === "style") node.setAttribute("style", value);
      else node.setAttribute(key, value === true ? "" : String(value));
    }
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function message(kind, title, text) {
    return h("div", { class: `state ${kind}`, role: kind === "error" ? "alert" : "status" }, h("strong", {}, title), text ? h("p", {}, text) : null);
  }

  function toolTitle() {
    const info = state.context.toolInfo;
    return (info && info.tool && (info.tool.title || info.tool.name)) || "the tool";
  }

  function errorText(result) {
    const texts = (result.content || []).filter((c) => c && c.type === "text").map((c) => c.text);
    return texts.join(" ").trim();
  }

  function dataOf(result) {
    if (result.structuredContent && typeof result.structuredContent === "object") return result.structuredContent;
    // A host may pass only the text; ours is the same JSON object.
    for (const item of result.content || []) {
      if (item && item.type === "text") {
        try {
          const parsed = JSON.parse(item.text);
          if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) return parsed;
        } catch (_) {
          /* not JSON: fall through */
        }
      }
    }
    return null;
  }

  function draw() {
    if (state.phase === "closed") return message("", "This view is closed.", "");
    if (state.phase === "cancelled") {
      return message("warning", "The request was cancelled.", state.reason ? `Reason: ${state.reason}` : "Ask again to see the result here.");
    }
    if (state.phase !== "result") {
      if (!state.connected) return message("", "Connecting to the host…", "This view shows a Campus MCP tool result once the host sends it.");
      return message("", `Waiting for the result of ${toolTitle()}…`, "");
    }
    const result = state.result || {};
    if (result.isError) {
      return message("error", "The tool answered with an error.", errorText(result) || "No details were given. The conversation has the answer in words.");
    }
    const data = dataOf(result);
    if (!data) {
      return message("error", "This result has nothing this view can draw.", "It came without structured data. The answer is in the conversation as text.");
    }
    try {
      const node = spec.render(data, result);
      if (node instanceof Node && (node.textContent || "").trim()) return node;
      return message("error", "This result has nothing this view can draw.", "The answer is in the conversation as text.");
    } catch (error) {
      const why = error instanceof Unreadable ? error.message : "Part of it is not in the shape this view knows.";
      return message(
        "error",
        "This view cannot draw this result.",
        `${why} It may come from another version of Campus MCP. The answer is in the conversation as text.`,
      );
    }
  }

  function show() {
    if (!main) return;
    main.replaceChildren(draw());
    requestAnimationFrame(reportSize);
  }

  function start(view) {
    spec = view;
    main = document.querySelector("main") || document.body.appendChild(document.createElement("main"));
    show();
    if (window.parent === window) {
      main.replaceChildren(message("", "This view opens inside an MCP host.", "Ask the assistant to run the tool, and the host shows the result here."));
      return;
    }
    if (typeof ResizeObserver === "function") {
      observer = new ResizeObserver(reportSize);
      observer.observe(document.documentElement);
    }
    request("ui/initialize", {
      protocolVersion: PROTOCOL,
      appInfo: { name: `campus-mcp-${view.name}`, version: VERSION },
      appCapabilities: { availableDisplayModes: ["inline"] },
    }).then(
      (answer) => {
        applyContext(answer.hostContext || {});
        state.connected = true;
        notify("ui/notifications/initialized", {});
        show();
      },
      (error) => {
        main.replaceChildren(message("error", "The host did not accept this view.", (error && error.message) || "It refused ui/initialize."));
      },
    );
  }

  // --- time and course helpers shared by the views ---
  function minutes(hhmm) {
    const [hours, mins] = String(hhmm).split(":").map(Number);
    return hours * 60 + (mins || 0);
  }
  function time12(hhmm) {
    const total = minutes(hhmm);
    if (!Number.isFinite(total)) return String(hhmm);
    const hours = Math.floor(total / 60) % 24;
    const mins = total % 60;
    const suffix = hours < 12 ? "AM" : "PM";
    return `${hours % 12 || 12}:${String(mins).padStart(2, "0")} ${suffix}`;
  }
  // A server sentence may carry 24-hour times ("meets on MW (13:00-13:50)"): say them the same way.
  function clock12(text) {
    return String(text || "").replace(/\b([01]?\d|2[0-3]):([0-5]\d)\b/g, (match) => time12(match));
  }
  function range12(start, end) {
    return `${time12(start)} – ${time12(end)}`;
  }
  function hourLabel(hour) {
    return `${hour % 12 || 12} ${hour % 24 < 12 ? "AM" : "PM"}`;
  }
  function days(letters) {
    return String(letters || "").split("").map((d) => DAYS[d] || d).join(", ");
  }
  function date(iso, options) {
    // A calendar date (YYYY-MM-DD) is the same day everywhere: format it in UTC.
    const [y, m, d] = String(iso).slice(0, 10).split("-").map(Number);
    const value = new Date(Date.UTC(y, m - 1, d));
    if (Number.isNaN(value.getTime())) return String(iso);
    return new Intl.DateTimeFormat("en-US", { timeZone: "UTC", ...(options || { weekday: "short", month: "short", day: "numeric" }) }).format(value);
  }
  function moment(iso) {
    const value = new Date(iso);
    if (Number.isNaN(value.getTime())) return String(iso);
    const zone = state.context.timeZone;
    const options = { month: "short", day: "numeric", year: "numeric", hour: "numeric", minute: "2-digit", hour12: true };
    try {
      return new Intl.DateTimeFormat("en-US", zone ? { ...options, timeZone: zone } : options).format(value);
    } catch (_) {
      return new Intl.DateTimeFormat("en-US", options).format(value);
    }
  }
  function courseKey(code) {
    // "CHEM 1100" for the lecture and its lab alike: the section number is not part of it.
    return String(code || "").trim().toUpperCase().replace(/\s+/g, " ");
  }
  function hue(code) {
    let sum = 0;
    for (const ch of courseKey(code)) sum = (sum * 31 + ch.charCodeAt(0)) >>> 0;
    return sum % 8;
  }
  function courseClass(code) {
    return `course hue-${hue(code)}`;
  }

  // The advisory and, per data source, when its data of the result's term last refreshed.
  function freshness(source, term) {
    const [label, verb] = SOURCES[source.key] || [source.covers || sourceWords(source.key), "last refreshed"];
    const byTerm = source.last_refresh_by_term;
    if (byTerm && term && term.uid) {
      const name = term.name || term.uid;
      if (byTerm[term.uid]) return `${label} for ${name} ${verb} ${moment(byTerm[term.uid])}.`;
      const listed = Object.keys(byTerm);
      if (!listed.length || listed.some((uid) => term.uid > uid)) return `${label} for ${name} has not refreshed yet.`;
      return `${label} for ${name} no longer refreshes: the term has ended.`;
    }
    if (source.last_refresh) return `${label} ${verb} ${moment(source.last_refresh)}.`;
    return `${label} has not been loaded yet.`;
  }
  function advisory(data, term) {
    const advice = data && data.advisory;
    if (!advice) return null;
    return h(
      "footer",
      { class: "advisory" },
      h("p", {}, advice.message),
      (advice.data_sources || []).map((source) => h("p", { class: "fresh" }, freshness(source, term))),
    );
  }
  function need(condition, what) {
    if (!condition) throw new Unreadable(what);
  }

  return {
    start, h, message, need, time12, clock12, range12, hourLabel, minutes, days, date, moment,
    courseKey, courseClass, advisory, freshness, DAYS, DAY_NAMES,
    unreadable: (what) => new Unreadable(what),
    get context() { return state.context; },
  };
})();
