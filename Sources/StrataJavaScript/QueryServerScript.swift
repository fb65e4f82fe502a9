/// The JavaScript side of Strata's query server: CouchDB's query-server
/// line protocol (one JSON array a line in, one JSON value a line out) and
/// the environment design-document functions expect (`emit`, `log`,
/// `toJSON`, `isArray`, `sum`, `require`, `send`/`start`/`getRow`).
///
/// The host gives it three functions: `readline()` (the next request line,
/// or null at the end), `respond(text)` and `logLine(text)`.
let queryServerScript = #"""
(function (readline, respond) {
  var ddocs = {};
  var mapFunctions = [];
  var viewLib = null;
  var emitted = null;
  var shown = null;

  // The engine's own JSON.stringify: functions may replace JSON's.
  var engineStringify = JSON.stringify;
  function stringify(value) { return engineStringify.call(JSON, value === undefined ? null : value); }

  this.log = function (message) {
    logLine(typeof message === 'string' ? message : stringify(message));
  };
  this.toJSON = function (value) { return stringify(value); };
  this.isArray = function (value) { return Object.prototype.toString.call(value) === '[object Array]'; };
  this.sum = function (values) {
    var total = 0;
    for (var i = 0; i < values.length; i++) total += values[i];
    return total;
  };
  this.emit = function (key, value) {
    if (emitted === null) throw { error: 'invalid_emit', reason: 'emit() called outside a map function' };
    emitted.push([key === undefined ? null : key, value === undefined ? null : value]);
  };
  // List functions' helpers: rows are not streamed here, so these keep
  // what a function sends for its answer.
  this.start = function (head) { if (shown) shown.head = head; };
  this.send = function (chunk) { if (shown) shown.chunks.push(String(chunk)); };
  this.getRow = function () { return shown && shown.rows.length ? shown.rows.shift() : null; };

  // CommonJS modules kept as strings in the design document (`lib/...`).
  function makeRequire(ddoc, base, cache) {
    return function (path) {
      var parts = path.split('/');
      var at = (path.charAt(0) === '.') ? base.slice() : [];
      for (var i = 0; i < parts.length; i++) {
        if (parts[i] === '..') at.pop();
        else if (parts[i] !== '.' && parts[i] !== '') at.push(parts[i]);
      }
      var key = at.join('/');
      if (cache[key]) return cache[key].exports;
      var source = ddoc;
      for (var j = 0; j < at.length; j++) {
        if (source === null || typeof source !== 'object' || !(at[j] in source)) {
          throw { error: 'invalid_require_path', reason: 'Object has no property "' + at[j] + '". ' + key };
        }
        source = source[at[j]];
      }
      if (typeof source !== 'string') throw { error: 'invalid_require_path', reason: 'Must require a JavaScript string, not: ' + typeof source };
      var module = { id: key, exports: {} };
      cache[key] = module;
      var body = new Function('module', 'exports', 'require', source);
      body(module, module.exports, makeRequire(ddoc, at.slice(0, at.length - 1), cache));
      return module.exports;
    };
  }

  function compile(source, ddoc) {
    if (typeof source !== 'string') throw { error: 'compilation_error', reason: 'Expression does not eval to a function. (' + stringify(source) + ')' };
    var require = ddoc ? makeRequire(ddoc, [], {}) : function () { throw { error: 'invalid_require_path', reason: 'require() needs a design document' }; };
    var f;
    try {
      f = new Function('require', 'return (' + source + '\n);')(require);
    } catch (e) {
      throw { error: 'compilation_error', reason: String(e) + ' (' + source + ')' };
    }
    if (typeof f !== 'function') throw { error: 'compilation_error', reason: 'Expression does not eval to a function. (' + source + ')' };
    return f;
  }

  // CouchDB's render.js (renderError): an update, show or list function's
  // own error ({error, reason}, ['error', name, reason]; and forbidden or
  // unauthorized) is its answer; anything else it raised is a render_error
  // that says what and where, with the engine's stack.
  function rendered(f, ddoc, args) {
    try {
      return f.apply(ddoc, args);
    } catch (e) {
      if (e && typeof e === 'object' && ((e.error && e.reason) || e[0] === 'error' || e[0] === 'fatal' ||
          e.forbidden !== undefined || e.unauthorized !== undefined)) throw e;
      var text = 'unknown', stack = '';
      try { text = String(e); } catch (ignored) { /* a toString that throws */ }
      try { stack = String(e && e.stack); } catch (ignored) { /* a stack getter that throws */ }
      throw ['error', 'render_error', 'function raised error: ' + text + ' \nstacktrace: ' + stack];
    }
  }

  function functionAt(ddoc, path) {
    var at = ddoc;
    for (var i = 0; i < path.length; i++) {
      if (at === null || typeof at !== 'object' || !(path[i] in at)) {
        throw { error: 'not_found', reason: 'missing ' + path.join('/') + ' function ' + path[path.length - 1] + ' on design doc ' + ddoc._id };
      }
      at = at[path[i]];
    }
    if (!ddoc.__compiled) ddoc.__compiled = {};
    var key = path.join('\u0000');
    if (!ddoc.__compiled[key]) ddoc.__compiled[key] = compile(at, ddoc);
    return ddoc.__compiled[key];
  }

  // What a request that raised answers.
  function errorAnswer(e) {
    if (e && typeof e === 'object' && (e.forbidden !== undefined || e.unauthorized !== undefined)) {
      return e.forbidden !== undefined ? { forbidden: String(e.forbidden) } : { unauthorized: String(e.unauthorized) };
    } else if (e && typeof e === 'object' && typeof e.error === 'string') {
      return ['error', e.error, String(e.reason === undefined ? '' : e.reason)];
    } else if (Object.prototype.toString.call(e) === '[object Array]' && e[0] === 'error' && typeof e[1] === 'string') {
      // CouchDB's form for a function's own error: throw(['error', name, reason]).
      return ['error', e[1], String(e[2] === undefined ? '' : e[2])];
    }
    return ['error', 'render_error', String(e)];
  }

  function reduceWith(sources, keys, values, rereduce) {
    var out = [];
    for (var i = 0; i < sources.length; i++) {
      out.push(compile(sources[i], null)(keys, values, rereduce));
    }
    return [true, out];
  }

  var commands = {
    reset: function () { mapFunctions = []; viewLib = null; return true; },
    // `views.lib` of the design document, for require('views/lib/...').
    add_lib: function (lib) { viewLib = { views: { lib: lib } }; return true; },
    add_fun: function (source) { mapFunctions.push(compile(source, viewLib)); return true; },
    // Beyond CouchDB's protocol: map_doc for many documents in one line.
    map_docs: function (docs) {
      var out = [];
      for (var i = 0; i < docs.length; i++) out.push(commands.map_doc(docs[i]));
      return out;
    },
    map_doc: function (doc) {
      var results = [];
      for (var i = 0; i < mapFunctions.length; i++) {
        emitted = [];
        try { mapFunctions[i](doc); } catch (e) {
          emitted = null;
          logLine('function raised exception (' + stringify(e) + ') with doc._id ' + doc._id);
          results.push([]);
          continue;
        }
        results.push(emitted);
        emitted = null;
      }
      return results;
    },
    reduce: function (sources, pairs) {
      var keys = [], values = [];
      for (var i = 0; i < pairs.length; i++) { keys.push(pairs[i][0]); values.push(pairs[i][1]); }
      return reduceWith(sources, keys, values, false);
    },
    rereduce: function (sources, values) { return reduceWith(sources, null, values, true); },
    // Beyond CouchDB's protocol: one reduce function over many batches (of
    // [key, value] pairs, or of values to rereduce) in one line, each
    // batch's [true, result] or its error apart.
    reduce_many: function (source, rereduce, batches) {
      var f = compile(source, null), out = [];
      for (var i = 0; i < batches.length; i++) {
        try {
          var keys = null, values = batches[i];
          if (!rereduce) {
            keys = []; values = [];
            for (var j = 0; j < batches[i].length; j++) { keys.push(batches[i][j][0]); values.push(batches[i][j][1]); }
          }
          out.push([true, f(keys, values, rereduce)]);
        } catch (e) {
          out.push(errorAnswer(e));
        }
      }
      return out;
    },
    ddoc: function () {
      var args = Array.prototype.slice.call(arguments);
      if (args[0] === 'new') { ddocs[args[1]] = args[2]; return true; }
      var ddoc = ddocs[args[0]];
      if (!ddoc) throw { error: 'query_protocol_error', reason: 'uncached design doc: ' + args[0] };
      var path = args[1], callArgs = args[2] || [];
      var f = functionAt(ddoc, path);
      switch (path[0]) {
        case 'updates':
          var answer = rendered(f, ddoc, callArgs);
          if (!isArray(answer) || answer.length !== 2) {
            throw { error: 'render_error', reason: 'undefined response from update function' };
          }
          var response = answer[1];
          if (typeof response === 'string') response = { body: response };
          return ['up', answer[0] === undefined ? null : answer[0], response === undefined ? {} : response];
        case 'validate_doc_update':
          f.apply(ddoc, callArgs);
          return 1;
        case 'filters':
          var docs = callArgs[0], request = callArgs[1], passes = [];
          for (var i = 0; i < docs.length; i++) passes.push(!!f.call(ddoc, docs[i], request));
          return [true, passes];
        case 'shows':
          var shownAnswer = rendered(f, ddoc, callArgs);
          if (typeof shownAnswer === 'string') shownAnswer = { body: shownAnswer };
          return ['resp', shownAnswer === undefined || shownAnswer === null ? { body: '' } : shownAnswer];
        case 'lists':
          // [head, req, rows]: the rows are given at once, read with getRow().
          shown = { head: {}, chunks: [], rows: (callArgs[2] || []).slice() };
          try {
            var tail = rendered(f, ddoc, [callArgs[0], callArgs[1]]);
            if (tail !== undefined && tail !== null) shown.chunks.push(String(tail));
            return ['list', shown.head || {}, shown.chunks.join('')];
          } finally {
            shown = null;
          }
        case 'views':
          var docsToMap = callArgs[0], kept = [];
          for (var j = 0; j < docsToMap.length; j++) {
            emitted = [];
            f.call(ddoc, docsToMap[j]);
            kept.push(emitted.length > 0);
            emitted = null;
          }
          return [true, kept];
        default:
          throw { error: 'unknown_command', reason: 'unknown ddoc command ' + path[0] };
      }
    }
  };

  var line;
  while ((line = readline()) !== null) {
    if (line === '') continue;
    var result;
    try {
      var request = JSON.parse(line);
      var command = commands[request[0]];
      if (!command) throw { error: 'unknown_command', reason: 'unknown command ' + request[0] };
      result = command.apply(null, request.slice(1));
    } catch (e) {
      emitted = null;
      result = errorAnswer(e);
    }
    var text;
    try {
      text = stringify(result);
    } catch (e) {
      // A cyclic value, or a toJSON that throws: the request's error, not
      // the end of this process.
      var why = 'unknown';
      try { why = String(e); } catch (ignored) { /* a toString that throws */ }
      text = '["error","render_error",' + engineStringify.call(JSON, 'the answer cannot be written as JSON: ' + why) + ']';
    }
    respond(text);
  }
})(readline, respond);
"""#
