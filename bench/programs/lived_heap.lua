-- The drop-in malloc on a heap that has lived (a check of its speed beyond fresh
-- processes; not part of the report): age the heap with mixed-size garbage and a
-- survivor set scattered across its spans, then run binary_trees.lua 14 in 10 waves in
-- the same process, each wave building, walking (count) and dropping its trees. Prints
-- each wave's CPU seconds and the survivors' total length (the same everywhere).
--   LD_PRELOAD=<allocator>.so lua5.4 bench/programs/lived_heap.lua tests/clients/lua
local dir = arg[1]
local keep = {}
for round = 1, 40 do
  local junk = {}
  for i = 1, 20000 do
    junk[i] = string.rep("x", (i * 37 + round) % 700 + 1) .. i
  end
  for i = 1, 20000, 7 do keep[#keep + 1] = junk[i] end  -- survivors scattered across spans
  junk = nil
  collectgarbage()
end
local chunk = assert(loadfile(dir .. "/binary_trees.lua"))
local real_print = print
print = function() end
local times = {}
for wave = 1, 10 do
  local t0 = os.clock()
  chunk("14")
  collectgarbage()
  times[wave] = os.clock() - t0
end
print = real_print
local n = 0
for _, s in ipairs(keep) do n = n + #s end
print(table.concat((function() local t = {} for i, v in ipairs(times) do t[i] = ("%.4f"):format(v) end return t end)(), " "), n)
