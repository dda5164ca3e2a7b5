// 提交 in JupyterLab: a command and a notebook toolbar button (schema/plugin.json) that save the notebook, send it
// through this server (autograder_lab/handlers.py) to the course's grading service with the person's own
// JupyterHub session, and show the progress and then the grade, with a link to the feedback.  Which course and
// which assignment is the service's decision, from its records and the file; nothing here names them.
import { ICommandPalette, Notification } from '@jupyterlab/apputils';
import { URLExt } from '@jupyterlab/coreutils';
import { INotebookTracker } from '@jupyterlab/notebook';
import { ServerConnection } from '@jupyterlab/services';

const COMMAND = 'autograder:submit';
const POLL_MS = 2000;
const POLL_LIMIT_MS = 30 * 60 * 1000;
const STATUS_TEXT = { queued: '正在排队评分…', grading: '正在评分…' };

async function call(path, init) {
  const settings = ServerConnection.makeSettings();
  const url = URLExt.join(settings.baseUrl, 'autograder', path);
  let response;
  try {
    response = await ServerConnection.makeRequest(url, init || {}, settings);
  } catch (error) {
    return { status: 0, data: { error: `无法连接 JupyterLab 的服务器：${error.message || error}`, reason: 'refused' } };
  }
  let data;
  try {
    data = await response.json();
  } catch (error) {
    data = {};
  }
  if (!data.error && response.status >= 400) {
    data.error = data.message || `请求失败（HTTP ${response.status}）`;
  }
  return { status: response.status, data };
}

function sleep(ms) {
  return new Promise(resolve => setTimeout(resolve, ms));
}

function number(x) {
  return Number.isInteger(x) ? String(x) : Number(x).toFixed(2).replace(/0+$/, '').replace(/\.$/, '');
}

function openFeedback(url) {
  return { label: '查看反馈', caption: '在新标签页中打开这次提交的反馈', displayType: 'accent', callback: () => window.open(url, '_blank', 'noopener') };
}

async function relogin() {
  await call('relogin', { method: 'POST' });
  window.location.reload();
}

async function follow(id, submission) {
  const where = `“${submission.course_title}”的作业“${submission.title}”`;
  const query = URLExt.objectToQueryString({ course: submission.course, id: submission.id, t: new URL(submission.status_url).searchParams.get('t') });
  const started = Date.now();
  let shown = '';
  while (Date.now() - started < POLL_LIMIT_MS) {
    const { status, data } = await call(`status${query}`);
    if (status !== 200) {
      Notification.update({ id, type: 'error', autoClose: false, message: `已提交到${where}，但暂时查不到评分进度：${data.error}`, actions: [openFeedback(submission.feedback_url)] });
      return;
    }
    if (data.status === 'graded') {
      const late = data.late && data.penalty !== null && data.penalty < 1 ? `（迟交，已乘以 ${number(data.penalty)}）` : '';
      Notification.update({ id, type: 'success', autoClose: false, message: `${where}已评分：得分 ${number(data.score)} / ${number(data.max_score)}${late}`, actions: [openFeedback(data.feedback_url)] });
      return;
    }
    if (data.status === 'failed') {
      Notification.update({ id, type: 'error', autoClose: false, message: `${where}这次没有评出分数：${data.error || '评分失败'}`, actions: [openFeedback(data.feedback_url)] });
      return;
    }
    const text = `已提交到${where}，${STATUS_TEXT[data.status] || data.status}`;
    if (text !== shown) {
      Notification.update({ id, type: 'in-progress', autoClose: false, message: text });
      shown = text;
    }
    await sleep(POLL_MS);
  }
  Notification.update({ id, type: 'warning', autoClose: false, message: `已提交到${where}，评分还没有完成：稍后在反馈页面查看`, actions: [openFeedback(submission.feedback_url)] });
}

async function submit(panel, course) {
  const name = panel.context.path.split('/').pop();
  const id = Notification.emit(`正在保存并提交 ${name}…`, 'in-progress', { autoClose: false });
  try {
    await panel.context.save();
  } catch (error) {
    Notification.update({ id, type: 'error', autoClose: false, message: `笔记本没能保存，所以没有提交：${error.message || error}` });
    return;
  }
  const { status, data } = await call('submit', { method: 'POST', body: JSON.stringify(course ? { path: panel.context.path, course } : { path: panel.context.path }) });
  if (status === 202) {
    await follow(id, data);
  } else if (data.reason === 'choose_course') {
    Notification.update({
      id, type: 'warning', autoClose: false, message: data.error,
      actions: data.choices.map(c => ({ label: `提交到“${c.title}”`, callback: () => submit(panel, c.course) }))
    });
  } else if (data.reason === 'token') {
    Notification.update({ id, type: 'error', autoClose: false, message: data.error, actions: [{ label: '重新登录', displayType: 'accent', callback: () => relogin() }] });
  } else {
    Notification.update({ id, type: 'error', autoClose: false, message: data.error });
  }
}

const plugin = {
  id: '@autograder/lab-submit:plugin',
  description: '笔记本工具栏上的“提交”：提交到课程的评分服务',
  autoStart: true,
  requires: [INotebookTracker],
  optional: [ICommandPalette],
  activate: (app, tracker, palette) => {
    let enabled = false;
    app.commands.addCommand(COMMAND, {
      label: '提交',
      caption: '把这个笔记本提交到课程评分（以你的 JupyterHub 身份）',
      isVisible: () => enabled,
      isEnabled: () => enabled && tracker.currentWidget !== null,
      execute: () => (tracker.currentWidget ? submit(tracker.currentWidget) : undefined)
    });
    tracker.currentChanged.connect(() => app.commands.notifyCommandChanged(COMMAND));
    if (palette) {
      palette.addItem({ command: COMMAND, category: '课程作业' });
    }
    call('config').then(({ data }) => {
      enabled = Boolean(data.enabled);
      app.commands.notifyCommandChanged(COMMAND);
    });
  }
};

export default plugin;
