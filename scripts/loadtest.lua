-- wrk script of scripts/loadtest: every request is a POST /v1/events batch with a fresh batch_id,
-- a fresh session and fresh event uuids, so the collector stores every event (it de-duplicates
-- on (app, uuid)). Arguments after wrk's `--`, each NAME=VALUE:
--
--   key=KEY        the app key (X-NFLog-Key), default dev-key
--   events=N       events per batch, default 100
--   seconds=S      stop starting requests S seconds after the thread starts (default: never)
--   quota=N        at most N requests per thread (default: no limit)
--   report=FILE    where done() writes its JSON figures (default: stdout)
--
-- Once a thread's deadline or quota is reached it starts nothing more (delay() holds its
-- connections) and stops when its last request has been answered, so wrk ends with nothing in
-- flight (`in_flight_at_end` says so): every event the collector stored was acknowledged, and
-- the caller can check that the collector's events_stored grew by exactly `accepted`. wrk itself
-- always runs for its whole -d: give it S plus a few seconds for the last answers.
--
-- Uuids are UUIDv7, as NFLogger makes them: 48 bits of Unix milliseconds, then 34 bits chosen
-- at random per thread (from /dev/urandom) and a 40-bit counter of the thread, so no two events
-- of one run share a uuid and runs do not collide.

local ffi_ok, ffi = pcall(require, "ffi")
local now_ms, mono_s
if ffi_ok and pcall(ffi.cdef, "typedef struct { long tv_sec; long tv_nsec; } nflog_timespec; int clock_gettime(int, nflog_timespec *);") then
  local ts = ffi.new("nflog_timespec")
  now_ms = function() ffi.C.clock_gettime(0, ts); return tonumber(ts.tv_sec) * 1000 + math.floor(tonumber(ts.tv_nsec) / 1e6) end
  mono_s = function() ffi.C.clock_gettime(1, ts); return tonumber(ts.tv_sec) + tonumber(ts.tv_nsec) / 1e9 end
else
  now_ms = function() return os.time() * 1000 end
  mono_s = function() return os.time() end
end

-- The main state: number the threads so that done() can collect their counters.
local threads = {}
function setup(thread)
  thread:set("index", #threads + 1)
  table.insert(threads, thread)
end

local function urandom(bytes)
  local f = io.open("/dev/urandom", "rb")
  local s = f:read(bytes); f:close()
  local n = 0
  for i = 1, #s do n = n * 256 + s:byte(i) end
  return n
end

local key, events, deadline, quota = "dev-key", 100, nil, nil
report_file = nil  -- a global: done() runs in wrk's main state, which gets no arguments, and reads it from a thread
local nonce_a, nonce_b, nonce_c, nonce_d  -- 12 + 2 + 12 + 8 random bits of this thread
local counter = 0
local started, reserved = nil, 0
local stopping = false
-- Globals: done() reads them from each thread's state with thread:get (numbers only).
sent, answered, non2xx, accepted, duplicates, first_sent, last_answer = 0, 0, 0, 0, 0, nil, nil

function init(args)
  for _, arg in ipairs(args) do
    local name, value = arg:match("^([%w_]+)=(.*)$")
    if name == "key" then key = value
    elseif name == "events" then events = tonumber(value)
    elseif name == "seconds" then deadline = tonumber(value)
    elseif name == "quota" then quota = tonumber(value)
    elseif name == "report" then report_file = value
    end
  end
  nonce_a, nonce_b, nonce_c, nonce_d = urandom(2) % 4096, urandom(1) % 4, urandom(2) % 4096, urandom(1)
  math.randomseed(urandom(4))
  started = mono_s()
  if deadline then deadline = started + deadline end
end

local function uuid(ms, n)
  -- xxxxxxxx-xxxx-7aaa-[89ab]ccc-ddnnnnnnnnnn
  return string.format("%08x-%04x-7%03x-%x%03x-%02x%010x",
    math.floor(ms / 65536), ms % 65536, nonce_a, 8 + nonce_b, nonce_c, nonce_d, n)
end

local point_names = { "ui.tap", "screen.view", "app.foreground", "cart.add", "search.query" }
local point_fmt = '{"uuid":"%s","session":"%s","name":"%s","kind":"point","type":"interaction","timestamp":%d,"parameters":{"n":%d}}'
local network_fmt = '{"uuid":"%s","session":"%s","name":"net.request","kind":"span","type":"network","timestamp":%d,"start":%d,"end":%d,"duration_ms":%.3f,"parameters":{"path":"/items/%d"},"end_parameters":{"status":200}}'
local usecase_fmt = '{"uuid":"%s","session":"%s","name":"flow.checkout","kind":"span","type":"usecase","timestamp":%d,"start":%d,"end":%d,"duration_ms":%.3f,"end_parameters":{"completed":%s}}'
local headers = { ["Content-Type"] = "application/json", ["User-Agent"] = "nflog-loadtest" }

function delay()
  if stopping then return 3600000 end
  if (deadline and mono_s() >= deadline) or (quota and reserved >= quota) then
    stopping = true
    -- Not `sent`: another connection's delay() may have returned 0 and its request() not run yet.
    if reserved == answered then wrk.thread:stop() end
    return 3600000
  end
  reserved = reserved + 1
  return 0
end

function request()
  -- wrk calls request() once before the thread starts, to check the script: not a request sent.
  -- Every real one follows a delay() that returned 0.
  local real = reserved > 0
  headers["X-NFLog-Key"] = key
  local now = now_ms()
  counter = counter + 1
  local batch = uuid(now, counter)
  counter = counter + 1
  local session = uuid(now - 60000, counter)
  local started_at = now - 60000 - math.random(0, 600000)
  local parts = {}
  for i = 1, events do
    counter = counter + 1
    local id = uuid(now, counter)
    local t = now - math.random(0, 60000)
    local r = math.random(1, 20)
    if r <= 2 then
      local d = math.random(5, 900) + math.random()
      parts[i] = string.format(network_fmt, id, session, t, t, t + math.floor(d), d, r)
    elseif r == 3 then
      local d = math.random(2000, 90000) + math.random()
      parts[i] = string.format(usecase_fmt, id, session, t, t, t + math.floor(d), d, math.random(1, 4) == 1 and "false" or "true")
    else
      parts[i] = string.format(point_fmt, id, session, point_names[math.random(1, #point_names)], t, i)
    end
  end
  local body = '{"version":1,"batch_id":"' .. batch .. '","sent_at":' .. now ..
    ',"sdk":{"name":"NFLogger","version":"0.1.0"},"context":{"app_id":"com.example.loadtest","app_version":"1.' ..
    math.random(0, 3) .. '.0","os_name":"iOS","os_version":"18.1","locale":"en_GB","sessions":[{"id":"' .. session ..
    '","started_at":' .. started_at .. ',"ended_at":' .. now .. '}]},"events":[' .. table.concat(parts, ",") .. ']}'
  if real then
    sent = sent + 1
    if sent > reserved then reserved = sent end  -- after a socket error wrk resends without delay()
    if not first_sent then first_sent = mono_s() end
  end
  return wrk.format("POST", "/v1/events", headers, body)
end

function response(status, headers, body)
  answered = answered + 1
  last_answer = mono_s()
  local name = "status_" .. status
  _G[name] = (_G[name] or 0) + 1
  if status >= 200 and status < 300 then
    accepted = accepted + (tonumber(body:match('"accepted":%s*(%d+)')) or 0)
    duplicates = duplicates + (tonumber(body:match('"duplicates":%s*(%d+)')) or 0)
  else
    non2xx = non2xx + 1
  end
  if stopping and reserved == answered then wrk.thread:stop() end
end

function done(summary, latency, requests)
  local sent_total, answered_total, non2xx_total, accepted_total, duplicates_total = 0, 0, 0, 0, 0
  local first, last = nil, nil
  local by_status = {}
  for _, thread in ipairs(threads) do
    sent_total = sent_total + (thread:get("sent") or 0)
    answered_total = answered_total + (thread:get("answered") or 0)
    non2xx_total = non2xx_total + (thread:get("non2xx") or 0)
    accepted_total = accepted_total + (thread:get("accepted") or 0)
    duplicates_total = duplicates_total + (thread:get("duplicates") or 0)
    local f, l = thread:get("first_sent"), thread:get("last_answer")
    if f and (not first or f < first) then first = f end
    if l and (not last or l > last) then last = l end
    for status = 100, 599 do
      local count = thread:get("status_" .. status)
      if count then by_status[status] = (by_status[status] or 0) + count end
    end
  end
  local window = (first and last and last > first) and (last - first) or (summary.duration / 1e6)
  local status_json = {}
  for status, count in pairs(by_status) do status_json[#status_json + 1] = string.format('"%d":%d', status, count) end
  local ms = function(us) return string.format("%.2f", us / 1000) end
  local json = string.format(
    '{"requests":%d,"sent":%d,"answered":%d,"non_2xx":%d,"statuses":{%s},"accepted":%d,"duplicates":%d,' ..
    '"window_s":%.3f,"requests_per_s":%.1f,"events_per_s":%.1f,' ..
    '"latency_ms":{"p50":%s,"p90":%s,"p99":%s,"max":%s,"mean":%s},' ..
    '"socket_errors":{"connect":%d,"read":%d,"write":%d,"timeout":%d},"wrk_duration_s":%.3f,"in_flight_at_end":%d}',
    summary.requests, sent_total, answered_total, non2xx_total, table.concat(status_json, ","), accepted_total, duplicates_total,
    window, answered_total / window, accepted_total / window,
    ms(latency:percentile(50)), ms(latency:percentile(90)), ms(latency:percentile(99)), ms(latency.max), ms(latency.mean),
    summary.errors.connect, summary.errors.read, summary.errors.write, summary.errors.timeout, summary.duration / 1e6,
    sent_total - answered_total)
  local path = threads[1] and threads[1]:get("report_file")
  if path then
    local f = io.open(path, "w"); f:write(json, "\n"); f:close()
  else
    io.write(json, "\n")
  end
end
