// `ctx.ui` for an extension inside pi's Node.js bridge. Dialogs and notices are calls to pi.
// Components (ctx.ui.custom, widget/footer/header factories, a custom editor, message
// renderers) live here: each is rendered to lines at the terminal width pi reports and the
// lines are sent to pi, again whenever the component asks (`tui.requestRender()`) or the width
// changes; pi sends keys back as `component_input`.
import { CURSOR_MARKER, KeybindingsManager, TUI } from "./tui.mjs";

const plain = (v) => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)));

/** pi's Theme over the colour codes pi sends (`theme` message); plain text until then. */
export function makeTheme(rt) {
  const codes = () => rt.theme ?? {};
  const wrap = (open, close) => (text) => (rt.theme ? `${open}${text}${close}` : String(text));
  return {
    get name() {
      return codes().name ?? "dark";
    },
    fg: (color, text) => {
      const c = codes().fg?.[color];
      return c ? `${c}${text}${codes().fgReset ?? "\x1b[39m"}` : String(text);
    },
    bg: (color, text) => {
      const c = codes().bg?.[color];
      return c ? `${c}${text}${codes().bgReset ?? "\x1b[49m"}` : String(text);
    },
    bold: wrap("\x1b[1m", "\x1b[22m"),
    dim: wrap("\x1b[2m", "\x1b[22m"),
    italic: wrap("\x1b[3m", "\x1b[23m"),
    underline: wrap("\x1b[4m", "\x1b[24m"),
    inverse: wrap("\x1b[7m", "\x1b[27m"),
    strikethrough: wrap("\x1b[9m", "\x1b[29m"),
    getFgAnsi: (color) => codes().fg?.[color] ?? "",
    getBgAnsi: (color) => codes().bg?.[color] ?? "",
    getColorMode: () => "truecolor",
    getThinkingBorderColor: () => (t) => t,
    getBashModeBorderColor: () => (t) => t,
  };
}

function resolveWidth(value, columns) {
  if (typeof value === "number") return Math.max(1, Math.min(columns, Math.floor(value)));
  if (typeof value === "string" && value.endsWith("%")) return Math.max(1, Math.floor((columns * parseFloat(value)) / 100));
  return undefined;
}

export function makeUi(ext) {
  const rt = ext.rt;
  const theme = makeTheme(rt);
  const keybindings = new KeybindingsManager({
    "tui.select.up": ["up"], "tui.select.down": ["down"], "tui.select.confirm": ["enter"],
    "tui.select.cancel": ["escape", "ctrl+c"], selectUp: ["up"], selectDown: ["down"],
    selectConfirm: ["enter"], selectCancel: ["escape", "ctrl+c"], interrupt: ["escape"], clear: ["ctrl+c"],
    exit: ["ctrl+d"],
  });
  const components = new Map(); // id -> {component, kind, key?, width?, resolve?}
  let nextId = 1;
  let dirty = new Set();
  let flushQueued = false;
  let editorFactory;
  let customEditor = null;

  const columns = () => rt.columns ?? 80;

  function renderLines(entry) {
    try {
      const lines = entry.component?.render?.(entry.width ?? columns()) ?? [];
      return lines.map((l) => String(l).split(CURSOR_MARKER).join(""));
    } catch (err) {
      return [`[render failed: ${err?.message ?? err}]`];
    }
  }

  function push(id) {
    const entry = components.get(id);
    if (!entry) return;
    const lines = renderLines(entry);
    switch (entry.kind) {
      case "widget":
        ext.notify("ui.setWidget", { key: entry.key, lines, placement: entry.placement });
        break;
      case "footer":
        ext.notify("ui.setFooter", { lines });
        break;
      case "header":
        ext.notify("ui.setHeader", { lines });
        break;
      default:
        ext.notify("ui.render", { component: id, lines });
    }
  }

  function scheduleRender(id) {
    dirty.add(id);
    if (flushQueued) return;
    flushQueued = true;
    setImmediate(() => {
      flushQueued = false;
      const ids = dirty;
      dirty = new Set();
      for (const i of ids) push(i);
    });
  }

  function dispose(id) {
    const entry = components.get(id);
    if (!entry) return;
    components.delete(id);
    try {
      entry.component?.dispose?.();
    } catch {}
  }

  function mount(kind, factory, extra = {}) {
    const id = nextId++;
    const tui = new TUI(() => scheduleRender(id));
    tui.terminal = { get columns() { return columns(); }, rows: 24, write() {} };
    const entry = { kind, ...extra, component: null };
    components.set(id, entry);
    return { id, tui, entry };
  }

  function dropKind(kind, key) {
    for (const [id, e] of components) if (e.kind === kind && (key === undefined || e.key === key)) dispose(id);
  }

  const api = {
    select: (title, options, opts) =>
      ext.call("ui.select", { title, options, timeout: opts?.timeout }, { signal: opts?.signal }).then((v) => v ?? undefined),
    confirm: (title, message, opts) =>
      ext.call("ui.confirm", { title, message, timeout: opts?.timeout }, { signal: opts?.signal }).then(Boolean),
    input: (title, placeholder, opts) =>
      ext.call("ui.input", { title, placeholder, timeout: opts?.timeout }, { signal: opts?.signal }).then((v) => v ?? undefined),
    editor: (title, prefill) => ext.call("ui.editor", { title, prefill }).then((v) => v ?? undefined),
    notify: (message, type) => ext.notify("ui.notify", { message: String(message), type }),
    setStatus: (key, text) => ext.notify("ui.setStatus", { key, text: text ?? undefined }),
    setWidget(key, content, options) {
      dropKind("widget", key);
      if (typeof content === "function") {
        if (!ext.hello.hasUI) return;
        const { id, tui, entry } = mount("widget", content, { key, placement: options?.placement });
        entry.component = content(tui, theme);
        push(id);
        return;
      }
      ext.notify("ui.setWidget", { key, lines: Array.isArray(content) ? content.map(String) : undefined, placement: options?.placement });
    },
    setFooter(factory) {
      dropKind("footer");
      if (typeof factory !== "function" || !ext.hello.hasUI) return ext.notify("ui.setFooter", { lines: null });
      const { id, tui, entry } = mount("footer");
      entry.component = factory(tui, theme, footerData(ext));
      push(id);
    },
    setHeader(factory) {
      dropKind("header");
      if (typeof factory !== "function" || !ext.hello.hasUI) return ext.notify("ui.setHeader", { lines: null });
      const { id, tui, entry } = mount("header");
      entry.component = factory(tui, theme);
      push(id);
    },
    setTitle: (title) => ext.notify("ui.setTitle", { title }),
    setEditorText(text) {
      if (customEditor) {
        customEditor.component.setText?.(String(text));
        return scheduleRender(customEditor.id);
      }
      ext.notify("ui.setEditorText", { text: String(text) });
    },
    pasteToEditor(text) {
      if (customEditor) {
        customEditor.component.insertTextAtCursor?.(String(text));
        return scheduleRender(customEditor.id);
      }
      ext.notify("ui.pasteToEditor", { text: String(text) });
    },
    getEditorText: () => (customEditor ? customEditor.component.getText?.() ?? "" : rt.view?.editorText ?? ""),
    setEditorComponent(factory) {
      if (customEditor) dispose(customEditor.id);
      customEditor = null;
      editorFactory = factory;
      if (typeof factory !== "function" || !ext.hello.hasUI) return ext.notify("ui.setEditorComponent", { component: null });
      const { id, tui, entry } = mount("editor");
      const editor = factory(tui, theme, keybindings);
      editor.focused = true;
      editor.onSubmit = (text) => ext.notify("ui.editorSubmit", { text });
      entry.component = editor;
      customEditor = { id, component: editor };
      ext.notify("ui.setEditorComponent", { component: id, lines: renderLines(entry) });
    },
    getEditorComponent: () => editorFactory,
    async custom(factory, options) {
      if (!ext.hello.hasUI) return undefined;
      const overlayOptions = typeof options?.overlayOptions === "function" ? options.overlayOptions() : options?.overlayOptions;
      const { id, tui, entry } = mount("custom", null, {
        width: options?.overlay ? resolveWidth(overlayOptions?.width, columns()) ?? Math.min(columns(), 80) : undefined,
      });
      return new Promise((resolve, reject) => {
        let finished = false;
        const finish = (result) => {
          if (finished) return;
          finished = true;
          dispose(id);
          resolve(result);
        };
        entry.resolve = finish;
        const done = (result) => {
          if (finished) return;
          ext.notify("ui.customDone", { component: id });
          finish(result);
        };
        Promise.resolve()
          .then(() => factory(tui, theme, keybindings, done))
          .then((component) => {
            if (finished) return;
            entry.component = component;
            if (component && "focused" in component) component.focused = true;
            options?.onHandle?.({ hide() {}, setHidden() {}, isHidden: () => false, focus() {}, unfocus() {}, isFocused: () => true });
            ext
              .call("ui.custom", { component: id, lines: renderLines(entry), overlay: Boolean(options?.overlay), overlayOptions: plain(overlayOptions) })
              .then(() => finish(undefined), () => finish(undefined));
          })
          .catch((err) => {
            dispose(id);
            reject(err);
          });
      });
    },
    setWorkingMessage: (message) => ext.notify("ui.setWorkingMessage", { message }),
    setWorkingVisible: (visible) => ext.notify("ui.setWorkingVisible", { visible: Boolean(visible) }),
    setWorkingIndicator: (options) => ext.notify("ui.setWorkingIndicator", { options: plain(options) }),
    setHiddenThinkingLabel: (label) => ext.notify("ui.setHiddenThinkingLabel", { label }),
    addAutocompleteProvider() {},
    onTerminalInput: () => () => {},
    setToolsExpanded: (expanded) => ext.notify("ui.setToolsExpanded", { expanded: Boolean(expanded) }),
    getToolsExpanded: () => Boolean(rt.view?.toolsExpanded),
    getAllThemes: () => (rt.view?.themes ?? []).map((name) => ({ name, path: undefined })),
    getTheme: () => undefined,
    setTheme: (t) => {
      ext.notify("ui.setTheme", { theme: typeof t === "string" ? t : t?.name });
      return { success: true };
    },
    theme,
  };

  return {
    api,
    theme,
    input(id, data) {
      const entry = components.get(id);
      if (!entry?.component) return;
      if (entry.kind === "editor") return editorInput(entry, data);
      try {
        entry.component.handleInput?.(data);
      } catch (err) {
        rt.log(`handleInput failed: ${err?.stack ?? err}`);
      }
      if (components.has(id)) scheduleRender(id);
    },
    closedByPi(id) {
      const entry = components.get(id);
      if (entry?.resolve) entry.resolve(undefined);
      else dispose(id);
    },
    rerenderAll() {
      for (const [id, entry] of components) {
        if (entry.kind === "custom" && entry.width !== undefined) continue;
        scheduleRender(id);
      }
    },
    disposeAll() {
      for (const id of [...components.keys()]) {
        const entry = components.get(id);
        if (entry?.resolve) entry.resolve(undefined);
        else dispose(id);
      }
      customEditor = null;
    },
    async renderRequest(msg) {
      const renderer = ext.renderers.get(msg.customType);
      if (!renderer) return null;
      const component = await renderer(msg.message, { expanded: Boolean(msg.expanded) }, theme);
      if (!component) return null;
      return { lines: renderLines({ component, width: msg.width ?? columns() }) };
    },
  };

  function editorInput(entry, data) {
    const editor = entry.component;
    // CustomEditor hands pi's own keys (interrupt, exit, model switches) back through this.
    editor.__piForward = (d) => ext.notify("ui.editorKey", { data: d });
    try {
      editor.handleInput?.(data);
    } catch (err) {
      rt.log(`editor handleInput failed: ${err?.stack ?? err}`);
    }
    if (customEditor?.component === editor) scheduleRender(customEditor.id);
  }
}

function footerData(ext) {
  return {
    getGitBranch: () => ext.rt.view?.gitBranch ?? null,
    getExtensionStatuses: () => new Map(Object.entries(ext.rt.view?.statuses ?? {})),
    getAvailableProviderCount: () => new Set((ext.rt.models.available ?? []).map((m) => m.provider)).size,
    onBranchChange: () => () => {},
  };
}
