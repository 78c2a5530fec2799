// Sorting and filtering of the report index's episode tables. A click on a column's head sorts
// by it (again: the other way); a drop-down above the table per filter column (those whose head
// has data-filter) keeps only the rows holding that value. Cell text is read, never parsed as
// markup.
"use strict";
(function () {
  function cellText(row, column) { return row.cells[column].textContent.trim(); }

  function compare(a, b) {
    const x = parseFloat(a);
    const y = parseFloat(b);
    if (!isNaN(x) && !isNaN(y)) { return x - y; }
    return a.localeCompare(b, undefined, { numeric: true });
  }

  function sortBy(table, column, head) {
    const body = table.tBodies[0];
    const down = head.getAttribute("aria-sort") === "ascending";
    for (const other of table.tHead.rows[0].cells) { other.removeAttribute("aria-sort"); }
    head.setAttribute("aria-sort", down ? "descending" : "ascending");
    const rows = Array.from(body.rows);
    rows.sort((a, b) => (down ? -1 : 1) * compare(cellText(a, column), cellText(b, column)));
    body.append(...rows);
  }

  function applyFilters(table, selects) {
    for (const row of table.tBodies[0].rows) {
      row.hidden = selects.some((s) => s.value !== "" && cellText(row, s.column) !== s.value);
    }
    const shown = Array.from(table.tBodies[0].rows).filter((r) => !r.hidden).length;
    table.previousElementSibling.querySelector(".shown").textContent = shown + " shown";
  }

  function makeSelect(table, head, column) {
    const select = document.createElement("select");
    select.column = column;
    select.setAttribute("aria-label", "filter by " + head.textContent);
    const values = new Set(Array.from(table.tBodies[0].rows, (r) => cellText(r, column)));
    select.append(new Option(head.textContent + ": all", ""));
    for (const value of Array.from(values).sort(compare)) {
      select.append(new Option(value === "" ? "(none)" : value, value));
    }
    return select;
  }

  function enhance(table) {
    const bar = document.createElement("div");
    bar.className = "filters";
    const selects = [];
    Array.from(table.tHead.rows[0].cells).forEach((head, column) => {
      head.addEventListener("click", () => sortBy(table, column, head));
      if (head.dataset.filter) { selects.push(makeSelect(table, head, column)); }
    });
    for (const select of selects) {
      select.addEventListener("change", () => applyFilters(table, selects));
      bar.appendChild(select);
    }
    const shown = document.createElement("span");
    shown.className = "shown";
    bar.appendChild(shown);
    table.parentElement.insertBefore(bar, table);
    applyFilters(table, selects);
  }

  document.querySelectorAll("table.sortable").forEach(enhance);
})();
