// gatesync status page: sorting and filtering in place, and live updates of the run in
// progress (server-sent events). The page works without this script; it only adds to it.
"use strict";

(function () {
  const root = document.body.dataset.root || "./";

  function cellText(row, index) {
    const cell = row.cells[index];
    return cell ? cell.textContent.trim() : "";
  }

  // the column a person sorted by survives the page redrawing itself after a run
  let sorted;

  function sortBy(table, index, ascending) {
    const headers = table.querySelectorAll("th[data-sort]");
    headers.forEach((h) => h.removeAttribute("aria-sort"));
    headers[index].setAttribute("aria-sort", ascending ? "ascending" : "descending");
    const body = table.tBodies[0];
    const rows = [...body.rows];
    rows.sort((a, b) => cellText(a, index).localeCompare(cellText(b, index), undefined, { numeric: true }) * (ascending ? 1 : -1));
    for (const row of rows) body.appendChild(row);
    sorted = { index, ascending };
  }

  function bindSorting() {
    for (const table of document.querySelectorAll("table.sortable")) {
      const headers = table.querySelectorAll("th[data-sort]");
      headers.forEach((th, index) => {
        th.tabIndex = 0;
        th.setAttribute("role", "button");
        const sort = () => sortBy(table, index, th.getAttribute("aria-sort") !== "ascending");
        th.addEventListener("click", sort);
        th.addEventListener("keydown", (e) => {
          if (e.key === "Enter" || e.key === " ") {
            e.preventDefault();
            sort();
          }
        });
      });
      if (sorted !== undefined && sorted.index < headers.length) sortBy(table, sorted.index, sorted.ascending);
    }
  }

  function rowMatches(row, filters) {
    if (filters.kind && row.dataset.kind !== filters.kind) return false;
    if (filters.status && row.dataset.status !== filters.status) return false;
    if (filters.label) {
      const labels = (row.dataset.labels || "").split(" ");
      const wanted = filters.label;
      if (!labels.some((l) => l === wanted || l.split("=")[0] === wanted)) return false;
    }
    if (filters.q && !(row.dataset.text || "").includes(filters.q.toLowerCase())) return false;
    return true;
  }

  function bindFilters() {
    const form = document.querySelector("form.filters");
    if (!form) return;
    const apply = () => {
      const filters = {};
      const params = new URLSearchParams();
      for (const input of form.querySelectorAll("[data-filter]")) {
        const value = input.value.trim();
        if (value !== "") {
          filters[input.dataset.filter] = value;
          params.set(input.name, value);
        }
      }
      let shown = 0;
      for (const row of document.querySelectorAll("table.resources tbody tr")) {
        const match = rowMatches(row, filters);
        row.hidden = !match;
        if (match) shown++;
      }
      const count = document.getElementById("shown-count");
      if (count) count.textContent = String(shown);
      const query = params.toString();
      history.replaceState(null, "", query === "" ? location.pathname : `${location.pathname}?${query}`);
    };
    form.addEventListener("input", apply);
    form.addEventListener("change", apply);
    apply();
    // all rows are fetched once without filters so that filtering in place can widen again
    if (location.search !== "") {
      fetch(location.pathname, { headers: { accept: "text/html" } })
        .then((r) => r.text())
        .then((text) => {
          const doc = new DOMParser().parseFromString(text, "text/html");
          const fresh = doc.querySelector("table.resources tbody");
          const current = document.querySelector("table.resources tbody");
          if (fresh && current) {
            current.replaceWith(fresh);
            apply();
          }
        })
        .catch(() => undefined);
    }
  }

  function bind() {
    bindSorting();
    bindFilters();
  }

  // The fresh page's filters hold the query the redraw was fetched with: what a person typed
  // meanwhile is carried over (and the field they were typing in keeps the focus and caret).
  function carryFilters(from, to) {
    const focused = from.contains(document.activeElement) ? document.activeElement : undefined;
    const form = to.querySelector("form.filters");
    let refocus;
    for (const input of from.querySelectorAll("form.filters [name]")) {
      const twin = form ? form.elements.namedItem(input.name) : null;
      if (!twin || !("value" in twin)) continue;
      twin.value = input.value;
      if (input === focused)
        refocus = () => {
          twin.focus();
          if (typeof input.selectionStart === "number" && typeof twin.setSelectionRange === "function")
            twin.setSelectionRange(input.selectionStart, input.selectionEnd);
        };
    }
    return refocus;
  }

  async function refresh() {
    const response = await fetch(location.href, { headers: { accept: "text/html" } });
    if (!response.ok) return;
    const doc = new DOMParser().parseFromString(await response.text(), "text/html");
    const fresh = doc.getElementById("main");
    const main = document.getElementById("main");
    if (fresh && main) {
      const refocus = carryFilters(main, fresh);
      main.replaceWith(fresh);
      bind();
      if (refocus) refocus();
    }
  }

  function bindLive() {
    if (!window.EventSource) return;
    const box = document.getElementById("live");
    const bar = document.getElementById("live-progress");
    const text = document.getElementById("live-text");
    // the run the page was drawn at: a run that ends before the stream connects still redraws it
    let seq = document.body.dataset.seq === undefined ? undefined : Number(document.body.dataset.seq);
    const source = new EventSource(`${root}ui/events`);
    source.onmessage = (event) => {
      const live = JSON.parse(event.data);
      if (live.running) {
        box.hidden = false;
        bar.max = Math.max(live.total, 1);
        bar.value = live.done;
        text.textContent = `run (${live.reason}): ${live.done}/${live.total}${live.last ? ` · ${live.last}` : ""}`;
        document.body.dataset.running = "true";
      } else {
        box.hidden = true;
        delete document.body.dataset.running;
      }
      if (seq !== undefined && live.seq !== seq) refresh().catch(() => undefined);
      seq = live.seq;
      document.body.dataset.liveSeq = String(seq);
    };
  }

  bind();
  bindLive();
})();
