-- Counts responses by status and prints one line for the driving script:
-- RESULT requests=.. duration_us=.. bytes=.. connect=.. read=.. write=.. timeout=..
--        p50_us=.. p99_us=.. status_200=.. ...
-- Optional arguments (after --): request lines "METHOD PATH [Header: value]...", separated by
-- "|" and sent in turn on each connection; without them wrk sends its one request.

local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  statuses = {}
  requests = {}
  for spec in (args[1] or ""):gmatch("[^|]+") do
    local method, path, rest = spec:match("^(%S+) (%S+)%s*(.*)$")
    local headers = {}
    for name, value in rest:gmatch("([%w-]+): ([^;]+)") do
      headers[name] = value
    end
    table.insert(requests, wrk.format(method, path, headers))
  end
  turn = 0
end

function request()
  if #requests == 0 then
    return wrk.request()
  end
  turn = turn % #requests + 1
  return requests[turn]
end

function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end

function done(summary, latency, _)
  local counts = {}
  for _, thread in ipairs(threads) do
    for status, n in pairs(thread:get("statuses")) do
      counts[status] = (counts[status] or 0) + n
    end
  end
  local e = summary.errors
  io.write(string.format(
    "RESULT requests=%d duration_us=%d bytes=%d connect=%d read=%d write=%d timeout=%d"
      .. " p50_us=%d p99_us=%d",
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.timeout,
    latency:percentile(50), latency:percentile(99)))
  for status, n in pairs(counts) do
    io.write(string.format(" status_%d=%d", status, n))
  end
  io.write("\n")
end
