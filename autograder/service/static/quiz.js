// A quiz attempt's page: every answer is saved to the server as it is given (PUT .../answers/N with a sequence
// number above the page's, so a late or replayed request never overwrites a newer answer), failed saves are
// retried when the connection comes back, and a timed exam's clock counts down the seconds the server said were
// left.  Without this script the form still works: "保存全部答案" and "提交" post every answer at once.
(function () {
  "use strict";
  const form = document.getElementById("quiz-form");
  if (!form) return;
  const api = form.dataset.api;
  const csrf = form.querySelector("input[name=csrf_token]").value;
  const status = document.getElementById("quiz-status");
  let seq = Number(form.dataset.seq || 0);
  const dirty = new Set();
  const timers = {};
  let closed = false;

  function state(position, text, bad) {
    const el = document.getElementById("state-" + position);
    if (!el) return;
    el.textContent = text;
    el.classList.toggle("error-message", Boolean(bad));
  }

  function valueOf(position) {
    const fields = form.querySelectorAll("[name=q" + position + "]");
    for (const f of fields) {
      if (f.type === "radio") { if (f.checked) return f.value; } else return f.value.trim();
    }
    return "";
  }

  function clock() {
    return new Date().toLocaleTimeString("zh-CN", { hour12: false });
  }

  function close(message) {
    closed = true;
    form.querySelectorAll("input, button").forEach((el) => { if (el.name !== "csrf_token") el.disabled = true; });
    if (status) status.textContent = message;
    setTimeout(() => window.location.reload(), 1500);
  }

  // One save per question at a time, the newest value last: a change during a save is sent after it.
  const inflight = new Set();
  const again = new Set();

  async function save(position) {
    if (closed) return;
    dirty.add(position);
    if (inflight.has(position)) {
      again.add(position);
      return;
    }
    inflight.add(position);
    try {
      await send(position);
    } finally {
      inflight.delete(position);
    }
    if (again.delete(position)) save(position);
  }

  async function send(position) {
    seq += 1;
    const mine = seq;
    state(position, "正在保存……");
    let response;
    try {
      response = await fetch(api + "/answers/" + position, {
        method: "PUT", credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
        body: JSON.stringify({ answer: valueOf(position), seq: mine }),
      });
    } catch (e) {
      state(position, "未能保存（网络中断？）：恢复连接后会自动重试；答案还在本页上。", true);
      return;
    }
    if (response.ok) {
      await response.json();  // read to its end: a page left next never cuts a finished save
      dirty.delete(position);
      state(position, (valueOf(position) ? "已保存" : "已清除答案") + "（" + clock() + "）");
      return;
    }
    let message = "未能保存（HTTP " + response.status + "）";
    try { message = (await response.json()).error || message; } catch (e) { /* not JSON */ }
    if (response.status === 403 || (response.status === 409 && /提交/.test(message))) {
      dirty.delete(position);
      state(position, message, true);
      close(message);
      return;
    }
    if (response.status !== 400) dirty.delete(position);
    state(position, message, true);
  }

  form.addEventListener("change", (event) => {
    const q = event.target.closest(".question");
    if (!q) return;
    const position = Number(q.dataset.position);
    clearTimeout(timers[position]);
    save(position);
  });
  form.addEventListener("input", (event) => {
    if (event.target.type === "radio") return;
    const q = event.target.closest(".question");
    if (!q) return;
    const position = Number(q.dataset.position);
    clearTimeout(timers[position]);
    state(position, "尚未保存（停止输入后自动保存）");
    timers[position] = setTimeout(() => save(position), 800);
  });

  function retry() {
    dirty.forEach((position) => save(position));
  }
  window.addEventListener("online", retry);
  setInterval(() => { if (dirty.size && navigator.onLine !== false) retry(); }, 5000);

  const timer = document.querySelector(".quiz-timer[data-seconds-left]");
  if (timer) {
    const value = timer.querySelector(".timer-value");
    const end = performance.now() + 1000 * Number(timer.dataset.secondsLeft);
    const tick = () => {
      const left = Math.max(0, Math.round((end - performance.now()) / 1000));
      value.textContent = Math.floor(left / 60) + " 分 " + (left % 60) + " 秒";
      timer.classList.toggle("urgent", left <= 60);
      if (left <= 0) {
        close("时间到：服务器已按保存的答案收卷，正在打开结果……");
        return;
      }
      setTimeout(tick, 250);
    };
    tick();
  }
})();
