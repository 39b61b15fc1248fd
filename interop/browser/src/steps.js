// The steps of a page's test, shown on the page (so that a screenshot
// tells how far it got) and kept in `window.steps` for the runner. A step
// that throws names itself in the error the runner reports.

export const steps = [];
window.steps = steps;

function render() {
  const list = document.getElementById("steps");
  if (!list) return;
  list.replaceChildren(
    ...steps.map((s) => {
      const item = document.createElement("li");
      item.className = s.status;
      item.textContent = `${s.status}: ${s.name}${s.detail ? ` (${s.detail})` : ""}`;
      return item;
    }),
  );
}

/** Runs `body` as the step `name`; `describe` of its value (by default the
 * value itself, when it is a string) is kept as the step's detail. */
export async function step(name, body, describe = (v) => (typeof v === "string" ? v : "")) {
  const entry = { name, status: "running", detail: "" };
  steps.push(entry);
  render();
  try {
    const value = await body();
    entry.status = "ok";
    entry.detail = describe(value);
    render();
    return value;
  } catch (error) {
    entry.status = "failed";
    entry.detail = String(error && error.message ? error.message : error);
    render();
    throw new Error(`step "${name}" failed: ${entry.detail}`);
  }
}

/** Throws `message` unless `condition` holds. */
export function check(condition, message) {
  if (!condition) throw new Error(message);
}
