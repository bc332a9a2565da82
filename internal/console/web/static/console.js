// modelgate console: progressive enhancements only. Every page works
// without this script; the CSP forbids inline scripts, so all behaviour is
// attached here through data attributes.
(function () {
  'use strict';

  var live = null;
  function announce(text) {
    if (!live) {
      live = document.createElement('div');
      live.className = 'sr-only';
      live.setAttribute('role', 'status');
      live.setAttribute('aria-live', 'polite');
      document.body.appendChild(live);
    }
    live.textContent = '';
    window.setTimeout(function () { live.textContent = text; }, 50);
  }

  // <form data-confirm="Revoke this key?">: ask before submitting.
  document.addEventListener('submit', function (e) {
    var form = e.target;
    var msg = form && form.getAttribute && form.getAttribute('data-confirm');
    if (msg && !window.confirm(msg)) {
      e.preventDefault();
    }
  });

  // <button data-copy="element-id">: copy that input's value to the clipboard.
  document.addEventListener('click', function (e) {
    var btn = e.target && e.target.closest ? e.target.closest('[data-copy]') : null;
    if (!btn) {
      return;
    }
    var el = document.getElementById(btn.getAttribute('data-copy'));
    if (!el) {
      return;
    }
    var text = 'value' in el ? el.value : el.textContent;
    if (!btn.hasAttribute('data-label')) {
      btn.setAttribute('data-label', btn.textContent);
    }
    var done = function (ok) {
      var t = document.body.dataset; // the page's texts, in its language
      btn.textContent = ok ? t.tCopied || 'Copied' : t.tCopyKeys || 'Press Ctrl+C';
      btn.classList.toggle('is-copied', ok);
      announce(ok ? t.tCopiedSr || 'Copied to the clipboard' : t.tCopyHint || 'Select the text and press Ctrl+C to copy');
      window.clearTimeout(btn._mgTimer);
      btn._mgTimer = window.setTimeout(function () {
        btn.textContent = btn.getAttribute('data-label');
        btn.classList.remove('is-copied');
      }, 2000);
    };
    var fallback = function () {
      var ok = false;
      try {
        el.focus();
        if (el.select) {
          el.select();
        }
        ok = document.execCommand('copy');
      } catch (err) {
        ok = false;
      }
      done(ok);
    };
    try {
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(text).then(function () { done(true); }, fallback);
      } else {
        fallback();
      }
    } catch (err) {
      fallback();
    }
  });

  // <form data-autosubmit>: a changed select submits the form (the
  // filters of the Models page); text fields still wait for Enter.
  document.addEventListener('change', function (e) {
    var el = e.target;
    if (el && el.tagName === 'SELECT' && el.form && el.form.hasAttribute('data-autosubmit')) {
      el.form.submit();
    }
  });

  // Secrets select themselves on focus, ready for a manual copy.
  var fields = document.querySelectorAll('input.secret, textarea.codes');
  for (var i = 0; i < fields.length; i++) {
    fields[i].addEventListener('focus', function (e) { e.target.select(); });
  }
})();

// Scrolling nav bars (narrow screens): bring the current item into view.
(function () {
  'use strict';
  var bars = document.querySelectorAll('.nav, .tabs');
  for (var i = 0; i < bars.length; i++) {
    var bar = bars[i];
    var cur = bar.querySelector('[aria-current="page"]');
    if (cur && bar.scrollWidth > bar.clientWidth) {
      var right = cur.offsetLeft + cur.offsetWidth - bar.offsetLeft;
      if (right > bar.clientWidth) {
        bar.scrollLeft = right - bar.clientWidth + 24;
      }
    }
  }
})();

// <select data-group-select>: highlight the chosen group's description
// (.group-info-item[data-group]) below the key form.
(function () {
  'use strict';
  var sel = document.querySelector('select[data-group-select]');
  if (!sel) {
    return;
  }
  var show = function () {
    var items = document.querySelectorAll('.group-info-item[data-group]');
    for (var i = 0; i < items.length; i++) {
      items[i].classList.toggle('is-selected', items[i].getAttribute('data-group') === sel.value);
    }
  };
  sel.addEventListener('change', show);
  show();
})();

// ---------- Playground (/console/playground) ----------
// The page renders a hidden shell (data-playground) with its texts, the
// models of each key's group and the CSRF token as data attributes; this
// section shows it, sends each turn to POST /console/api/playground (run
// server-side as the picked key), reads the JSON answer or the SSE stream,
// and shows each turn's tokens and cost. Answers are shown as text only.
(function () {
  'use strict';
  var root = document.querySelector('[data-playground]');
  if (!root || !window.fetch || !window.TextDecoder || !window.AbortController) {
    return;
  }
  var d = root.dataset;
  function tr(name, vars) {
    var s = d['t' + name] || '';
    for (var k in vars || {}) {
      s = s.split('{' + k + '}').join(String(vars[k]));
    }
    return s;
  }
  function $(sel) { return root.querySelector(sel); }
  var keySel = $('#play-key'), modelSel = $('#play-model'), maxIn = $('#play-max'), streamCb = $('#play-stream');
  var sysIn = $('#play-system'), log = $('[data-play-log]'), empty = $('[data-play-empty]'), input = $('#play-input');
  var sendBtn = $('[data-play-send]'), clearBtn = $('[data-play-clear]'), code = $('[data-play-code]');
  var pre = $('[data-play-pre]'), copyBtn = $('[data-play-copy]');
  var models = {};
  try {
    models = JSON.parse(d.models || '{}') || {};
  } catch (err) {
    models = {};
  }
  var history = [];   // the turns that were answered, as chat messages
  var busy = null;    // the AbortController of the turn in flight
  var codeLang = 'curl';
  root.hidden = false;

  function groupModels() {
    var opt = keySel.options[keySel.selectedIndex];
    return (opt && models[opt.getAttribute('data-group')]) || [];
  }

  function fillModels() {
    var list = groupModels(), keep = modelSel.value;
    while (modelSel.firstChild) {
      modelSel.removeChild(modelSel.firstChild);
    }
    list.forEach(function (m) {
      var o = document.createElement('option');
      o.value = m.id;
      o.textContent = m.id;
      o.selected = m.id === keep;
      modelSel.appendChild(o);
    });
    if (!list.length) {
      var none = document.createElement('option');
      none.value = '';
      none.textContent = tr('NoModels');
      modelSel.appendChild(none);
    }
    modelSel.disabled = !list.length;
    sendBtn.disabled = !list.length && !busy;
    updateCode();
  }

  function modelMax() {
    var list = groupModels();
    for (var i = 0; i < list.length; i++) {
      if (list[i].id === modelSel.value && list[i].max_output) {
        return list[i].max_output;
      }
    }
    return 1048576;
  }

  // money shows a decimal amount ("0.001230") like the server's money
  // function: two to six decimals, in the page's currency format.
  function money(s) {
    var m = /^(-?)(\d+)\.(\d+)$/.exec(String(s || ''));
    if (!m) {
      return String(s);
    }
    var frac = m[3].replace(/0+$/, '');
    while (frac.length < 2) {
      frac += '0';
    }
    return m[1] + (d.money || '0.00').replace('0.00', m[2] + '.' + frac);
  }

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) {
      e.className = cls;
    }
    if (text !== undefined) {
      e.textContent = text;
    }
    return e;
  }

  function addTurn(role, text, label) {
    var li = el('li', 'turn turn-' + role);
    li.appendChild(el('div', 'turn-role', label));
    var body = el('div', 'turn-text', text);
    li.appendChild(body);
    var meta = el('div', 'turn-meta');
    li.appendChild(meta);
    log.appendChild(li);
    empty.hidden = true;
    li.scrollIntoView({block: 'nearest'});
    return {li: li, body: body, meta: meta};
  }

  function messages(extra) {
    var out = [];
    var sys = sysIn.value.trim();
    if (sys) {
      out.push({role: 'system', content: sys});
    }
    out = out.concat(history);
    if (extra) {
      out.push({role: 'user', content: extra});
    }
    return out;
  }

  function maxTokens() {
    var v = maxIn.value.trim();
    if (v === '') {
      maxIn.setCustomValidity('');
      return null;
    }
    var n = Number(v), max = modelMax();
    if (!/^\d+$/.test(v) || n < 1 || n > max) {
      maxIn.setCustomValidity(tr('MaxRange', {max: max}));
      return NaN;
    }
    maxIn.setCustomValidity('');
    return n;
  }

  function setBusy(ctrl) {
    busy = ctrl;
    sendBtn.textContent = ctrl ? tr('Stop') : tr('Send');
    sendBtn.classList.toggle('btn-danger', !!ctrl);
    sendBtn.classList.toggle('btn-primary', !ctrl);
    sendBtn.disabled = !ctrl && modelSel.disabled;
    root.setAttribute('aria-busy', ctrl ? 'true' : 'false');
  }

  function showError(turn, status, text) {
    var msg = text, code = '';
    try {
      var j = JSON.parse(text);
      if (j && j.error) {
        msg = j.error.message || text;
        code = j.error.code || '';
      }
    } catch (err) { /* not JSON: shown as it is */ }
    turn.li.classList.add('turn-error');
    turn.body.textContent = '';
    turn.body.appendChild(el('strong', '', tr('Failed', {status: status}) + ' '));
    turn.body.appendChild(document.createTextNode(msg));
    if (code) {
      turn.body.appendChild(document.createTextNode(' '));
      turn.body.appendChild(el('code', 'errcode', code));
    }
    if (code === 'invalid_api_key') {
      turn.body.appendChild(el('p', 'turn-hint', tr('KeyRefused')));
    }
  }

  // refreshBalance shows the account's balance after a turn in the
  // sidebar (/console/api/me), in the page's own words and currency.
  function refreshBalance() {
    var el = document.querySelector('[data-balance]');
    if (!el) {
      return;
    }
    fetch('/console/api/me', {credentials: 'same-origin'})
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (me) {
        if (me && me.balance) {
          el.textContent = el.getAttribute('data-balance').replace('{amount}', money(me.balance));
        }
      }, function () { /* the next page load shows it */ });
  }

  function showMeta(turn, usage, cost) {
    var parts = [];
    if (usage) {
      parts.push(tr('Tokens', {'in': usage.prompt_tokens || 0, out: usage.completion_tokens || 0}));
    }
    if (cost !== null && cost !== undefined) {
      parts.push(tr('Cost', {cost: money(cost)}));
      window.setTimeout(refreshBalance, 1500); // once the charge is posted
    }
    turn.meta.textContent = parts.join(' · ');
    return parts;
  }

  // costOf finds a streamed turn's cost in its usage record (a browser
  // cannot read the X-Modelgate-Cost trailer); records land within about a
  // second.
  function costOf(keyID, requestID, turn, usage) {
    var waits = [300, 700, 1500, 3000, 6000], i = 0;
    var parts = showMeta(turn, usage, null);
    turn.meta.textContent = parts.concat([tr('CostWait')]).join(' · ');
    function next() {
      if (i >= waits.length || !requestID) {
        turn.meta.textContent = parts.concat([tr('CostLater')]).join(' · ');
        return;
      }
      window.setTimeout(function () {
        fetch(d.usage + '?limit=50&key=' + encodeURIComponent(keyID), {credentials: 'same-origin'})
          .then(function (r) { return r.ok ? r.json() : {data: []}; })
          .then(function (j) {
            var rows = (j && j.data) || [];
            for (var k = 0; k < rows.length; k++) {
              if (rows[k].request_id === requestID) {
                showMeta(turn, usage, rows[k].cost);
                return;
              }
            }
            i++;
            next();
          }, function () { i++; next(); });
      }, waits[i]);
    }
    next();
  }

  function readStream(resp, turn, onDone) {
    var reader = resp.body.getReader(), dec = new TextDecoder(), buf = '', text = '', usage = null, broken = null;
    function handle(ev) {
      var data = ev.split(/\r?\n/).filter(function (l) { return l.indexOf('data:') === 0; })
        .map(function (l) { return l.slice(5).replace(/^ /, ''); }).join('\n');
      if (!data || data === '[DONE]') {
        return;
      }
      var j;
      try {
        j = JSON.parse(data);
      } catch (err) {
        return;
      }
      if (j.error) {
        broken = JSON.stringify(j);
        return;
      }
      if (j.choices && j.choices[0] && j.choices[0].delta && typeof j.choices[0].delta.content === 'string') {
        text += j.choices[0].delta.content;
        turn.body.textContent = text;
      }
      if (j.usage) {
        usage = j.usage;
      }
    }
    function pump() {
      return reader.read().then(function (r) {
        if (r.done) {
          buf += dec.decode();
          if (buf.trim()) {
            handle(buf);
          }
          onDone(text, usage, broken);
          return;
        }
        buf += dec.decode(r.value, {stream: true});
        var parts = buf.split(/\r?\n\r?\n/);
        buf = parts.pop();
        parts.forEach(handle);
        return pump();
      });
    }
    return pump().catch(function (err) {
      onDone(text, usage, null, err);
    });
  }

  function send() {
    if (busy) {
      busy.abort();
      return;
    }
    var text = input.value.trim();
    var mt = maxTokens();
    if (mt !== mt) { // NaN: out of range
      maxIn.reportValidity();
      return;
    }
    if (!text || !modelSel.value) {
      input.focus();
      return;
    }
    var keyID = keySel.value, stream = streamCb.checked;
    var body = {key_id: keyID, model: modelSel.value, messages: messages(text), stream: stream};
    if (mt) {
      body.max_tokens = mt;
    }
    addTurn('user', text, tr('You'));
    input.value = '';
    var turn = addTurn('assistant', tr('Waiting'), tr('Assistant') + ' · ' + body.model);
    turn.body.classList.add('muted');
    var ctrl = new AbortController();
    setBusy(ctrl);
    var finish = function (answer, usage, cost, requestID) {
      turn.body.classList.remove('muted');
      if (!answer) {
        turn.body.textContent = tr('EmptyAnswer');
        turn.body.classList.add('muted');
      }
      history.push({role: 'user', content: text});
      if (answer) {
        history.push({role: 'assistant', content: answer});
      }
      if (cost !== null) {
        showMeta(turn, usage, cost);
      } else {
        costOf(keyID, requestID, turn, usage);
      }
      setBusy(null);
      updateCode();
    };
    var failed = function (err) {
      turn.body.classList.remove('muted');
      turn.li.classList.add('turn-error');
      turn.body.textContent = err && err.name === 'AbortError' ? tr('Stopped') : tr('Network') + ' ' + (err && err.message || err);
      setBusy(null);
    };
    fetch(d.api, {method: 'POST', credentials: 'same-origin', signal: ctrl.signal,
      headers: {'Content-Type': 'application/json', 'X-CSRF-Token': d.csrf}, body: JSON.stringify(body)})
      .then(function (resp) {
        var requestID = resp.headers.get('X-Request-Id');
        if (!resp.ok) {
          return resp.text().then(function (t) {
            turn.body.classList.remove('muted');
            showError(turn, resp.status, t);
            setBusy(null);
          });
        }
        if (/^text\/event-stream/.test(resp.headers.get('Content-Type') || '')) {
          turn.body.textContent = '';
          return readStream(resp, turn, function (answer, usage, broken, err) {
            if (broken) {
              showError(turn, resp.status, broken);
              setBusy(null);
              return;
            }
            if (err && !answer) {
              failed(err);
              return;
            }
            if (err) { // stopped or cut after some text: keep it, cost from the record
              turn.li.classList.add('turn-cut');
              turn.body.appendChild(el('span', 'turn-hint', ' ' + tr('Stopped')));
            }
            finish(answer, usage, null, requestID);
          });
        }
        return resp.json().then(function (j) {
          var c = j && j.choices && j.choices[0] && j.choices[0].message;
          var answer = c && typeof c.content === 'string' ? c.content : '';
          turn.body.textContent = answer;
          finish(answer, j && j.usage, resp.headers.get('X-Modelgate-Cost'), requestID);
        });
      })
      .catch(failed);
  }

  // --- the same request as code ---

  function indent(s, pad) { return s.split('\n').join('\n' + pad); }
  function shellQuote(s) { return "'" + s.replace(/'/g, "'\\''") + "'"; }

  function codeFor(lang) {
    var msgs = messages(input.value.trim());
    if (!msgs.some(function (m) { return m.role === 'user'; })) {
      return tr('CodeEmpty');
    }
    var mt = maxTokens(), stream = streamCb.checked, model = modelSel.value;
    var base = d.base || '/v1';
    var req = {model: model, messages: msgs};
    if (mt) {
      req.max_tokens = mt;
    }
    if (stream) {
      req.stream = true;
      req.stream_options = {include_usage: true};
    }
    var m = JSON.stringify(msgs, null, 2);
    if (lang === 'python') {
      var py = ['import os', '', 'from openai import OpenAI', '', 'client = OpenAI(',
        '    base_url=' + JSON.stringify(base) + ',', '    api_key=os.environ["MODELGATE_API_KEY"],', ')', ''];
      py.push((stream ? 'stream' : 'completion') + ' = client.chat.completions.create(');
      py.push('    model=' + JSON.stringify(model) + ',');
      py.push('    messages=' + indent(m, '    ') + ',');
      if (mt) {
        py.push('    max_tokens=' + mt + ',');
      }
      if (stream) {
        py.push('    stream=True,', '    stream_options={"include_usage": True},', ')',
          'for chunk in stream:', '    if chunk.choices and chunk.choices[0].delta.content:',
          '        print(chunk.choices[0].delta.content, end="", flush=True)', 'print()');
      } else {
        py.push(')', 'print(completion.choices[0].message.content)');
      }
      return py.join('\n');
    }
    if (lang === 'node') {
      var js = ['import OpenAI from "openai";', '', 'const client = new OpenAI({',
        '  baseURL: ' + JSON.stringify(base) + ',', '  apiKey: process.env.MODELGATE_API_KEY,', '});', ''];
      js.push('const ' + (stream ? 'stream' : 'completion') + ' = await client.chat.completions.create({');
      js.push('  model: ' + JSON.stringify(model) + ',');
      js.push('  messages: ' + indent(m, '  ') + ',');
      if (mt) {
        js.push('  max_tokens: ' + mt + ',');
      }
      if (stream) {
        js.push('  stream: true,', '  stream_options: { include_usage: true },', '});',
          'for await (const chunk of stream) {', '  process.stdout.write(chunk.choices[0]?.delta?.content ?? "");', '}');
      } else {
        js.push('});', 'console.log(completion.choices[0].message.content);');
      }
      return js.join('\n');
    }
    return ['curl ' + base + '/chat/completions \\', '  -H "Authorization: Bearer $MODELGATE_API_KEY" \\',
      '  -H "Content-Type: application/json" \\', '  -d ' + shellQuote(JSON.stringify(req, null, 2))].join('\n');
  }

  function updateCode() {
    if (code.open) {
      pre.textContent = codeFor(codeLang);
    }
  }

  root.addEventListener('click', function (e) {
    var b = e.target.closest ? e.target.closest('[data-play-lang]') : null;
    if (!b) {
      return;
    }
    codeLang = b.getAttribute('data-play-lang');
    var all = root.querySelectorAll('[data-play-lang]');
    for (var i = 0; i < all.length; i++) {
      all[i].setAttribute('aria-pressed', all[i] === b ? 'true' : 'false');
    }
    updateCode();
  });

  copyBtn.addEventListener('click', function () {
    var text = pre.textContent;
    var done = function (ok) {
      copyBtn.textContent = ok ? tr('Copied') : tr('CopyFailed');
      copyBtn.classList.toggle('is-copied', ok);
      if (!ok) {
        var range = document.createRange();
        range.selectNodeContents(pre);
        var sel = window.getSelection();
        sel.removeAllRanges();
        sel.addRange(range);
      }
      window.clearTimeout(copyBtn._mgTimer);
      copyBtn._mgTimer = window.setTimeout(function () {
        copyBtn.textContent = tr('Copy');
        copyBtn.classList.remove('is-copied');
      }, 2000);
    };
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(text).then(function () { done(true); }, function () { done(false); });
    } else {
      done(false);
    }
  });

  code.addEventListener('toggle', updateCode);
  keySel.addEventListener('change', fillModels);
  [modelSel, maxIn, streamCb, sysIn, input].forEach(function (x) {
    x.addEventListener(x.tagName === 'SELECT' || x.type === 'checkbox' ? 'change' : 'input', updateCode);
  });
  sendBtn.addEventListener('click', send);
  input.addEventListener('keydown', function (e) {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      send();
    }
  });
  clearBtn.addEventListener('click', function () {
    if (busy) {
      busy.abort();
    }
    history = [];
    while (log.firstChild) {
      log.removeChild(log.firstChild);
    }
    empty.hidden = false;
    updateCode();
    input.focus();
  });
  fillModels();
})();
