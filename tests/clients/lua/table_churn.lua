-- GC-heavy workload: tables that grow, shrink and rehash — array parts filled and
-- thinned by table.remove, hash parts with string keys and small tables as values,
-- deletions during traversal, records built and dropped.
-- Argument: rounds (default 200). Output: a sum that does not depend on
-- traversal order.
local rounds = tonumber((...)) or 200
local sum = 0

for round = 1, rounds do
  local array = {}
  for i = 1, 1000 do
    array[i] = i * round
  end
  for i = 1000, 1, -3 do
    table.remove(array, i)
  end
  local map = {}
  for i = 1, 600 do
    map["k" .. (i * round % 997)] = { i, tostring(i), { round } }
  end
  for key, value in pairs(map) do
    if value[1] % 2 == 0 then
      map[key] = nil
    end
  end
  local kept = 0
  for _, value in pairs(map) do
    kept = kept + #value[2]
  end
  local records = {}
  for i = 1, 300 do
    records[i] = { id = i, name = "r" .. i, tags = { i % 3, i % 5 }, round = round }
  end
  for i = 300, 1, -2 do
    records[i] = nil
  end
  sum = sum + #array + kept + array[#array] + #records[299].tags
end
print("table churn", rounds, "sum", sum)
