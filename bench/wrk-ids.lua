-- wrk request generator for bench/run.mjs.
-- env: WRK_PATH (may contain {id} and/or {price}), WRK_METHOD, WRK_BODY,
--      WRK_IDS (file with one id per line: {id} is replaced by a random line of it),
--      WRK_PRICE_MAX (default 990: {price} is a random integer 0..WRK_PRICE_MAX).
--      WRK_SEQ_START (optional): take ids in order instead of at random, starting after that many requests;
--      once every id was used, go round again with WRK_PATH2 (transitions on fresh records: place, then cancel).
-- Fixed seed, so every server sees the same sequence of choices.
local tpl = os.getenv("WRK_PATH") or "/"
local method = os.getenv("WRK_METHOD") or "GET"
local body = os.getenv("WRK_BODY")
if body == "" then body = nil end
local pricemax = tonumber(os.getenv("WRK_PRICE_MAX") or "990")
local headers = {}
if body then headers["Content-Type"] = "application/json" end
-- WRK_HEADER (optional): one more header, "Name: value" (the API key line).
local extra = os.getenv("WRK_HEADER")
if extra and extra ~= "" then
  local name, value = extra:match("^([^:]+):%s*(.*)$")
  headers[name] = value
end
local has_id = tpl:find("{id}", 1, true)
local has_price = tpl:find("{price}", 1, true)
local ids = {}
if has_id then
  local f = assert(io.open(os.getenv("WRK_IDS"), "r"))
  for line in f:lines() do if line ~= "" then ids[#ids + 1] = line end end
  f:close()
end
local path2 = os.getenv("WRK_PATH2") or tpl
local seq = tonumber(os.getenv("WRK_SEQ_START") or "")
math.randomseed(12345)
if not has_id and not has_price then
  -- static request: wrk builds it once (no per-request Lua call)
  wrk.method = method
  wrk.path = tpl
  wrk.body = body
  for k, v in pairs(headers) do wrk.headers[k] = v end
elseif seq then
  request = function()
    local n = #ids
    local pass = math.floor(seq / n)
    local id = ids[(seq % n) + 1]
    seq = seq + 1
    local p = (pass == 0) and tpl or path2
    return wrk.format(method, (p:gsub("{id}", id)), headers, body)
  end
else
  request = function()
    local p = tpl
    if has_id then p = p:gsub("{id}", ids[math.random(1, #ids)]) end
    if has_price then p = p:gsub("{price}", tostring(math.random(0, pricemax))) end
    return wrk.format(method, p, headers, body)
  end
end
