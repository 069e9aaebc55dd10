-- GC-heavy workload: strings built piece by piece — string.format, concatenation
-- in a loop (each step a new string), table.concat, gsub with a callback, upper,
-- rep and sub. Every string becomes garbage at once; only lengths and end bytes
-- enter the checksum, so building strings (not hashing them) is the work.
-- Argument: rounds (default 2000). Output: the checksum, deterministic.
local rounds = tonumber((...)) or 2000
local checksum = 0

local function mix(s)
  checksum = (checksum * 31 + #s * 7 + s:byte(1) + s:byte(-1)) % 4294967296
end

local function letter(digit)
  return string.char(65 + tonumber(digit))
end

for round = 1, rounds do
  local parts = {}
  for i = 1, 50 do
    parts[i] = string.format("%d:%x;", round * i, i * 7919)
  end
  local joined = table.concat(parts)
  local grown = ""
  for i = 1, 25 do
    grown = grown .. parts[i]
  end
  local upper = joined:upper():gsub("%d", letter)
  local repeated = string.rep(grown, 3, "|")
  mix(joined)
  mix(grown)
  mix(upper)
  mix(repeated:sub(round % #repeated + 1))
end
print("strings built", rounds, "checksum", checksum)
