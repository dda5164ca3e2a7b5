// The pages of the grading service: countdowns, live updates (polling a fragment of the page),
// notebook upload (drag and drop or file picker, checks before upload, progress), a check of the visible tests
// before an attempt, and the roster download.
// No framework, no inline script (the Content-Security-Policy allows scripts only from /static/).
"use strict";

(function () {
  function left(ms) {
    if (ms <= 0) return "已截止";
    const minutes = Math.floor(ms / 60000);
    const days = Math.floor(minutes / 1440), hours = Math.floor((minutes % 1440) / 60), mins = minutes % 60;
    if (days) return `还剩 ${days} 天 ${hours} 小时`;
    if (hours) return `还剩 ${hours} 小时 ${mins} 分钟`;
    return minutes >= 1 ? `还剩 ${mins} 分钟` : "还剩不到 1 分钟";
  }

  // Every time on a page is written by the server in the course's zone (one zone per page, said in .tz-note);
  // the browser only counts down, and says the device's own zone next to the note when it differs.
  function zoneOf(date) {
    const off = -date.getTimezoneOffset(), a = Math.abs(off);
    return `UTC${off < 0 ? "-" : "+"}${String(Math.floor(a / 60)).padStart(2, "0")}:${String(a % 60).padStart(2, "0")}`;
  }

  function zoneNote(root) {
    root.querySelectorAll(".tz-note[data-zone]").forEach((el) => {
      const mine = zoneOf(new Date());
      if (mine !== el.dataset.zone && !el.querySelector(".device-zone")) {
        const span = document.createElement("span");
        span.className = "device-zone";
        span.textContent = `你的设备在 ${mine}，请自行换算。`;
        el.append(" ", span);
      }
    });
  }

  function localize(root) {
    root.querySelectorAll("[data-countdown]").forEach((el) => {
      el.textContent = left(new Date(el.dataset.countdown) - Date.now());
    });
  }

  // A box that scrolls sideways (a wide table, a long traceback) can be reached and scrolled with the keyboard.
  function scrollables(root) {
    root.querySelectorAll(".table-wrap, details.feedback table, pre").forEach((el) => {
      if (el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1) {
        el.tabIndex = 0;
        el.setAttribute("role", "region");
        el.setAttribute("aria-label", el.tagName === "PRE" ? "回溯（可滚动）" : "表格（可左右滚动）");
      }
    });
  }

  // A region with data-poll is refreshed from that URL while its fragment says data-pending="1".
  function live(box) {
    const url = box.dataset.poll;
    const interval = Number(box.dataset.interval || 1500);
    let timer = null, last = null;
    async function tick() {
      timer = null;
      try {
        const r = await fetch(url, { credentials: "same-origin", headers: { Accept: "text/html" }, cache: "no-store" });
        if (r.ok && !r.redirected) {
          const html = await r.text();
          if (html !== last) {
            last = html;
            const open = {};  // what the reader has folded or unfolded stays so
            box.querySelectorAll("details[id]").forEach((d) => { open[d.id] = d.open; });
            box.innerHTML = html;
            box.querySelectorAll("details[id]").forEach((d) => {
              if (d.id in open) d.open = open[d.id];
            });
            localize(box);
            zoneNote(box);
            scrollables(box);
            box.dispatchEvent(new CustomEvent("live:updated", { bubbles: true }));
          }
          const body = box.querySelector(".live-body");
          box.dataset.pending = body ? body.dataset.pending : "0";
        } else if (r.redirected || r.status === 401) {
          box.dataset.pending = "0";
          return;
        }
      } catch (e) {
        // a network hiccup: try again at the next tick
      }
      schedule();
    }
    function schedule() {
      if (box.dataset.pending === "1" && timer === null) timer = setTimeout(tick, interval);
    }
    box.addEventListener("live:refresh", () => {
      box.dataset.pending = "1";
      if (timer !== null) clearTimeout(timer);
      tick();
    });
    schedule();
  }

  function mib(bytes) {  // as the page states the limit: 20, 0.5, 2.5
    return String(Math.round((bytes / 1048576) * 10) / 10);
  }

  function size(bytes) {
    return bytes < 1048576 ? `${Math.max(1, Math.round(bytes / 1024))} KiB` : `${mib(bytes)} MiB`;
  }

  // Everything the server would refuse that can be seen in the browser, said in plain words.
  async function problemOf(file, form) {
    const title = form.dataset.title;
    if (!file) return "没有选择文件。";
    if (!/\.ipynb$/i.test(file.name)) return `“${file.name}”不是 Jupyter 笔记本：只接受 .ipynb 文件。`;
    if (file.size === 0) return "这个文件是空的。";
    const limit = Number(form.dataset.limit);
    if (file.size > limit) {
      return `文件有 ${size(file.size)}，超过上限 ${mib(limit)} MiB。请在 Jupyter 中清除全部输出（Restart Kernel and Clear All Outputs）后保存，再上传。`;
    }
    let nb;
    try {
      nb = JSON.parse(await file.text());
    } catch (e) {
      return "这个文件不是合法的 JSON，Jupyter 打不开它。请上传在 Jupyter 中保存的 .ipynb 文件。";
    }
    if (!nb || nb.nbformat !== 4 || !Array.isArray(nb.cells)) return "这不是 nbformat 4 格式的 Jupyter 笔记本。";
    const ids = new Set();
    let code = "";
    for (const c of nb.cells) {
      const g = c && c.metadata && c.metadata.nbgrader && c.metadata.nbgrader.grade_id;
      if (typeof g === "string") ids.add(g);
      if (c && c.cell_type === "code") code += (Array.isArray(c.source) ? c.source.join("") : String(c.source || "")) + "\n";
    }
    const mine = form.dataset.gradeIds.split(" ").filter(Boolean);
    if (mine.some((g) => ids.has(g))) return null;
    const owners = JSON.parse(form.dataset.owners || "{}");
    for (const g of ids) {
      if (owners[g]) return `这是作业 ${owners[g]} 的笔记本，不是本作业（${title}）的。请上传本作业的笔记本。`;
    }
    const functions = form.dataset.functions.split(" ").filter(Boolean);
    if (functions.some((f) => new RegExp("^\\s*def\\s+" + f + "\\s*\\(", "m").test(code))) return null;
    return `这不是本作业（${title}）的笔记本：里面既没有作业的答题单元，也没有定义要求的函数（${functions.join("、")}）。`;
  }

  function uploader(form) {
    const input = form.querySelector("input[type=file]");
    const drop = form.querySelector(".drop");
    const message = form.querySelector("#upload-message");
    const bar = form.querySelector("progress");
    const chosen = form.querySelector("#chosen");
    const region = document.getElementById("live");
    let busy = false;
    let queuedNotice = false;  // "已收到 … 正在排队评分" is on screen: it goes once the attempt is graded

    function say(text, bad) {
      queuedNotice = false;
      message.textContent = text;
      message.className = bad ? "error-message" : "notice";
    }

    function send(file) {
      const data = new FormData();
      data.append("csrf_token", form.elements.csrf_token.value);
      data.append("notebook", file, file.name);
      const xhr = new XMLHttpRequest();
      xhr.open("POST", form.action);
      xhr.responseType = "json";
      bar.hidden = false;
      bar.value = 0;
      busy = true;
      xhr.upload.addEventListener("progress", (e) => {
        if (e.lengthComputable) bar.value = Math.round((100 * e.loaded) / e.total);
      });
      xhr.addEventListener("load", () => {
        busy = false;
        bar.hidden = true;
        input.value = "";
        if (xhr.status === 202) {
          say(`已收到 ${file.name}，正在排队评分；结果会出现在下面的提交记录里。`, false);
          queuedNotice = true;
        } else {
          const error = xhr.response && xhr.response.error;
          say(error ? `没有提交：${error}` : `上传失败（HTTP ${xhr.status}），请重试。`, true);
        }
        if (region) region.dispatchEvent(new Event("live:refresh"));
      });
      xhr.addEventListener("error", () => {
        busy = false;
        bar.hidden = true;
        say("网络出错，上传没有完成，请重试。", true);
      });
      xhr.send(data);
    }

    async function take(file) {
      if (busy) return;
      chosen.hidden = !file;
      if (file) chosen.textContent = `已选择：${file.name}（${size(file.size)}）`;
      const problem = await problemOf(file, form);
      if (problem) {
        say(`没有提交：${problem}`, true);
        input.value = "";
        return;
      }
      say(`正在上传 ${file.name} ……`, false);
      send(file);
    }

    input.addEventListener("change", () => take(input.files[0]));
    ["dragenter", "dragover"].forEach((t) => drop.addEventListener(t, (e) => {
      e.preventDefault();
      drop.classList.add("over");
    }));
    ["dragleave", "drop"].forEach((t) => drop.addEventListener(t, () => drop.classList.remove("over")));
    drop.addEventListener("drop", (e) => {
      e.preventDefault();
      const files = e.dataTransfer && e.dataTransfer.files;
      if (files && files.length > 1) {
        say("一次只能提交一个笔记本。", true);
        return;
      }
      take(files && files[0]);
    });
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      take(input.files[0]);
    });
    // when the live region says no more uploads are possible (attempts used up, deadline passed), say so here
    if (region) {
      region.addEventListener("live:updated", () => {
        const body = region.querySelector(".live-body");
        const refusal = body && body.dataset.refusal;
        if (queuedNotice && body && body.dataset.pending === "0") {  // graded: the notice and the file name go
          say("", false);
          chosen.hidden = true;
        }
        const counts = document.getElementById("counts-warning");  // under counts: last, what the next upload replaces
        if (counts && body && body.dataset.countsWarning) counts.textContent = body.dataset.countsWarning;
        drop.hidden = Boolean(refusal);
        if (refusal && !busy) {
          chosen.hidden = true;
          say(refusal, true);
        }
      });
    }
  }

  // A check before an attempt: the chosen notebook goes to the checks address (the visible tests only, no attempt
  // used), after the same checks in the browser as an upload; its result appears in the form's live region.
  function checker(form) {
    const input = form.querySelector("input[type=file]");
    const message = form.querySelector("#check-message");
    const region = document.getElementById("check-live");
    let busy = false;
    let waiting = false;  // "已收到 … 正在运行可见测试" is on screen: it goes once the result is shown
    function say(text, bad) {
      waiting = false;
      message.textContent = text;
      message.className = bad ? "error-message" : "notice";
    }
    if (region) {
      region.addEventListener("live:updated", () => {
        const body = region.querySelector(".live-body");
        if (waiting && body && body.dataset.pending === "0") say("", false);
      });
    }
    async function take(file) {
      if (busy || !file) return;
      const problem = await problemOf(file, form);
      input.value = "";
      if (problem) {
        say(`没有检查：${problem}`, true);
        return;
      }
      busy = true;
      say(`正在上传 ${file.name} 以检查……`, false);
      const data = new FormData();
      data.append("csrf_token", form.elements.csrf_token.value);
      data.append("notebook", file, file.name);
      try {
        const r = await fetch(form.action, { method: "POST", body: data, credentials: "same-origin" });
        const answer = await r.json().catch(() => null);
        if (r.status === 202) {
          say(`已收到 ${file.name}，正在运行可见测试；结果显示在下面，不占提交次数。`, false);
          waiting = true;
        } else say(answer && answer.error ? `没有检查：${answer.error}` : `检查没有开始（HTTP ${r.status}），请重试。`, true);
      } catch (e) {
        say("网络出错，检查没有开始，请重试。", true);
      }
      busy = false;
      if (region) region.dispatchEvent(new Event("live:refresh"));
    }
    input.addEventListener("change", () => take(input.files[0]));
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      take(input.files[0]);
    });
  }

  // The roster import answers with the new codes as a CSV file: download it, then show the new list.
  function rosterImport(form) {
    const message = form.querySelector("#import-message");
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      message.className = "";
      message.textContent = "正在导入……";
      try {
        const r = await fetch(form.action, { method: "POST", body: new FormData(form), credentials: "same-origin" });
        const type = r.headers.get("content-type") || "";
        if (r.ok && type.startsWith("text/csv")) {
          const name = (/filename="([^"]+)"/.exec(r.headers.get("content-disposition") || "") || [])[1] || "codes.csv";
          const url = URL.createObjectURL(await r.blob());
          const a = document.createElement("a");
          a.href = url;
          a.download = name;
          document.body.appendChild(a);
          a.click();
          a.remove();
          setTimeout(() => URL.revokeObjectURL(url), 60000);
          message.className = "notice";
          message.textContent = `已导入 ${r.headers.get("x-roster-total")} 名学生，新建 ${r.headers.get("x-roster-created")} 个账号。` +
            `新访问码已下载为 ${name}（只此一份，请妥善保存）。`;
        } else {
          const doc = new DOMParser().parseFromString(await r.text(), "text/html");
          const said = doc.querySelector(".error-message, .notice");
          message.className = r.ok ? "notice" : "error-message";
          message.textContent = said ? said.textContent : `导入失败（HTTP ${r.status}）`;
        }
        const page = new DOMParser().parseFromString(await (await fetch(location.href, { credentials: "same-origin" })).text(), "text/html");
        const fresh = page.getElementById("roster-table"), old = document.getElementById("roster-table");
        if (fresh && old) old.replaceWith(fresh);
        const heading = page.querySelector("#roster-count"), oldHeading = document.getElementById("roster-count");
        if (heading && oldHeading) oldHeading.replaceWith(heading);
      } catch (err) {
        message.className = "error-message";
        message.textContent = "网络出错，导入没有完成，请重试。";
      }
      form.reset();
    });
  }

  // A form with data-confirm (a code reset) asks first; cancelling sends nothing.
  function confirmations() {
    document.addEventListener("submit", (e) => {
      const form = e.target;
      if (form instanceof HTMLFormElement && form.dataset.confirm && !window.confirm(form.dataset.confirm)) e.preventDefault();
    }, true);
  }

  // The account each page was shown for, remembered by this browser for this site alone (localStorage belongs to
  // the page's origin: a page on another port or host cannot write it) and for the page's course (each course, and
  // the administrators' pages, signs in on its own). When it differs from the last page's of that course - another
  // tab signed in, or a session cookie set by another site - the page says so at its top. Signing out with the
  // button forgets it.
  function accountNotice() {
    const body = document.body;
    if (!body.dataset.account) return;
    const ACCOUNT_KEY = "autograder.account:" + (body.dataset.scope || "");
    const now = { id: body.dataset.account, label: body.dataset.accountLabel };
    let before = null;
    try {
      before = JSON.parse(localStorage.getItem(ACCOUNT_KEY) || "null");
      localStorage.setItem(ACCOUNT_KEY, JSON.stringify(now));
    } catch (e) {
      return;  // storage unavailable (a private window's policy): no notice
    }
    if (before && before.id && before.id !== now.id) {
      const note = document.createElement("p");
      note.className = "account-change";
      note.setAttribute("role", "alert");
      note.textContent = `注意：你现在已作为${now.label}登录，而这个浏览器刚才登录的是${before.label}。` +
        "如果不是你自己换的账号，请立即点“退出”，再用自己的访问码登录，然后再上传。";
      const main = document.getElementById("main");
      if (main) main.prepend(note);
    }
    document.querySelectorAll("form.logout").forEach((form) => form.addEventListener("submit", () => {
      try { localStorage.removeItem(ACCOUNT_KEY); } catch (e) { /* nothing to forget */ }
    }));
  }

  function start() {
    accountNotice();
    zoneNote(document);
    confirmations();
    localize(document);
    scrollables(document);
    document.addEventListener("toggle", (e) => scrollables(e.target), true);  // what a <details> shows when opened
    setInterval(() => localize(document), 30000);
    document.querySelectorAll("[data-poll]").forEach(live);
    const form = document.getElementById("upload");
    if (form) uploader(form);
    const check = document.getElementById("check");
    if (check) checker(check);
    const roster = document.getElementById("roster-import");
    if (roster) rosterImport(roster);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
