-- GC-heavy workload: build and drop complete binary trees of tables, with one
-- long-lived tree beside them (the shape of the benchmarks game's binary-trees).
-- Argument: the maximum depth (default 12). Output: node counts, deterministic.
local max_depth = tonumber((...)) or 12
local min_depth = 4
if max_depth < min_depth + 2 then
  max_depth = min_depth + 2
end

local function make(depth)
  if depth == 0 then
    return {}
  end
  depth = depth - 1
  return { make(depth), make(depth) }
end

local function count(tree)
  if tree[1] then
    return 1 + count(tree[1]) + count(tree[2])
  end
  return 1
end

print(("stretch tree of depth %d\t nodes: %d"):format(max_depth + 1, count(make(max_depth + 1))))
local long_lived = make(max_depth)
for depth = min_depth, max_depth, 2 do
  local trees = 1 << (max_depth - depth + min_depth)
  local nodes = 0
  for _ = 1, trees do
    nodes = nodes + count(make(depth))
  end
  print(("%d\t trees of depth %d\t nodes: %d"):format(trees, depth, nodes))
end
print(("long lived tree of depth %d\t nodes: %d"):format(max_depth, count(long_lived)))
