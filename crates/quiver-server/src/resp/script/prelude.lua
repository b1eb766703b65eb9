-- Run once when the scripting VM starts, with the whole standard library in reach.
-- Receives the bridge table (`reply_error`, and `register` and `loading` while a library
-- loads), the real global table and the `redis` library built in Rust. Returns the
-- environments scripts and functions run in, and the runner.
local bridge, G, redis = ...
local error, type, tostring, setmetatable, rawset, xpcall =
  error, type, tostring, setmetatable, rawset, xpcall

-- Tables scripts may read but not change: the globals and every library.
local readonly = setmetatable({}, { __mode = "k" })
local function deny()
  error("Attempt to modify a readonly table", 2)
end
local function missing(k)
  error("Script attempted to access nonexistent global variable '" .. tostring(k) .. "'", 3)
end
local function protect(t)
  local p = setmetatable({}, { __index = t, __newindex = deny, __metatable = false })
  readonly[p] = true
  return p
end

-- `redis.call`, `redis.pcall` and `redis.setresp` are set for each session of runs
-- (they reach its commands). `pcall` hands an error reply (raised by `redis.call`, or an
-- `{err = ...}` table) to the script as its text, as Redis 7.0 does.
local raw_pcall = pcall
local reply_error = bridge.reply_error
local function settle(ok, ...)
  if ok then
    return ok, ...
  end
  return false, reply_error((...))
end
G.pcall = function(...)
  return settle(raw_pcall(...))
end
redis.register_function = function(...)
  local register = bridge.register
  if register == nil then
    error("redis.register_function can only be called on FUNCTION LOAD command", 2)
  end
  return register(...)
end

-- No printing, no files, no bytecode, no reaching the real globals.
local raw_loadstring, setfenv, raw_setmetatable = loadstring, setfenv, setmetatable
for _, name in ipairs({ "print", "dofile", "loadfile", "load", "loadstring", "getfenv",
  "setfenv", "module", "require", "newproxy" }) do
  G[name] = nil
end
G.setmetatable = function(t, mt)
  if readonly[t] then
    error("Attempt to modify a readonly table", 0)
  end
  return raw_setmetatable(t, mt)
end
G.rawset = function(t, k, v)
  if readonly[t] then
    error("Attempt to modify a readonly table", 0)
  end
  return rawset(t, k, v)
end
G.redis = redis
for _, name in ipairs({ "redis", "string", "table", "math", "coroutine", "bit", "cjson",
  "cmsgpack", "struct" }) do
  if G[name] ~= nil then
    G[name] = protect(G[name])
  end
end

-- A table that errors on any name it does not hold.
local function strict(t, lookup)
  local p = setmetatable({}, {
    __index = function(_, k)
      local v = lookup(k)
      if v == nil then
        missing(k)
      end
      return v
    end,
    __newindex = deny,
    __metatable = false,
  })
  readonly[p] = true
  return p
end

-- Scripts' globals: everything above, read-only.
local env = strict(G, function(k)
  return G[k]
end)
G._G = env

-- `loadstring` of source text only (never bytecode), in the scripts' environment.
G.loadstring = function(text, name)
  if type(text) == "string" and text:byte(1) == 27 then
    return nil, "loading bytecode is not allowed"
  end
  local f, message = raw_loadstring(text, name)
  if f then
    setfenv(f, env)
  end
  return f, message
end

-- Functions' globals: the same once loaded; while their library loads, only the
-- part of `redis` that registers functions and logs, as in Redis.
local load_api = { register_function = redis.register_function, log = redis.log }
for name, value in pairs(redis) do
  if type(value) ~= "function" then
    load_api[name] = value
  end
end
local load_globals = { redis = strict(load_api, function(k)
  return load_api[k]
end) }
local function_env = strict(G, function(k)
  if bridge.loading then
    return load_globals[k]
  end
  return G[k]
end)

-- Runs a script (it reads the globals KEYS and ARGV) or a function (called with keys
-- and args) under the error handler, which sees the stack where the error was raised.
-- Takes the tables of the keys and of the arguments.
local function run(f, handler, is_function, keys, args)
  if is_function then
    return xpcall(function()
      return f(keys, args)
    end, handler)
  end
  G.KEYS, G.ARGV = keys, args
  local ok, value = xpcall(f, handler)
  G.KEYS, G.ARGV = nil, nil
  return ok, value
end

return env, function_env, run
