-- wrk script for scripts/bench-gateway.mjs: replays a precomputed request mix.
-- Usage: wrk -t2 -c64 -d10s --latency -s wrk-mix.lua http://127.0.0.1:PORT -- requests.tsv
-- requests.tsv: one request per line, "<path?query>\t<api key>[\t<accept-encoding>]" (key and coding may be empty). Every request is formatted once,
-- in init(); request() only steps through the array, so wrk spends its CPU on the sockets, not on Lua.
-- Each thread starts at a different offset so the threads do not send the same sequence in lockstep.
local threads = 0
function setup(thread)
  thread:set("tid", threads)
  threads = threads + 1
end

local reqs, n, i = {}, 0, 0
function init(args)
  local file = args[1] or error("wrk-mix.lua: pass the requests file after --")
  for line in io.lines(file) do
    local url, rest = line:match("^([^\t]+)\t?(.*)$")
    if url then
      n = n + 1
      local key, coding = rest:match("^([^\t]*)\t?(.*)$")
      local headers = {}
      if key ~= nil and key ~= "" then headers["x-api-key"] = key end
      if coding ~= nil and coding ~= "" then headers["Accept-Encoding"] = coding end
      reqs[n] = wrk.format("GET", url, headers)
    end
  end
  if n == 0 then error("wrk-mix.lua: no requests in " .. file) end
  i = math.floor(((tid or 0) * n) / 7) % n
end

function request()
  i = i + 1
  if i > n then i = 1 end
  return reqs[i]
end
