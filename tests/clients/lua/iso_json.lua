-- Workload: decode the iso-codes language list (ISO 639-3, about 8000 entries)
-- with dkjson, summarise it, and encode it again with a fixed key order.
-- Arguments: the JSON file, the number of decodes (default 1), and at most how
-- many entries to keep (default all). Output: counts and a checksum of the
-- re-encoded text, deterministic.
local json = require "dkjson"
local path, decodes, limit = ...
decodes = tonumber(decodes) or 1

local file = assert(io.open(path, "rb"))
local text = file:read("a")
file:close()

local data
for _ = 1, decodes do
  data = assert(json.decode(text))
end
local list = data["639-3"]
if limit then
  local head = {}
  for i = 1, math.min(tonumber(limit), #list) do
    head[i] = list[i]
  end
  list = head
end

local by_scope, by_type, names = {}, {}, {}
for i, entry in ipairs(list) do
  by_scope[entry.scope] = (by_scope[entry.scope] or 0) + 1
  by_type[entry.type] = (by_type[entry.type] or 0) + 1
  names[i] = entry.name
end
local function print_counts(label, counts)
  local keys = {}
  for key in pairs(counts) do
    keys[#keys + 1] = key
  end
  table.sort(keys)
  for _, key in ipairs(keys) do
    print(label, key, counts[key])
  end
end
print("languages", #list)
print_counts("scope", by_scope)
print_counts("type", by_type)
table.sort(names)
print("first names", names[1], names[2], names[3])
print("last name", names[#names])

local order = { "alpha_3", "alpha_2", "bibliographic", "common_name", "inverted_name", "name",
                "scope", "type" }
local encoded = json.encode({ ["639-3"] = list }, { indent = true, keyorder = order })
local checksum = 0
for i = 1, #encoded, 3 do
  checksum = (checksum * 33 + encoded:byte(i)) % 4294967296
end
print("encoded bytes", #encoded, "checksum", checksum)
