# Builds and drops large dicts and lists, then prints what it computed: the allocator
# sees many small objects made and freed in waves (run once as it is, once with
# PYTHONMALLOC=malloc so that every object comes from malloc).
import sys

total = 0
for wave in range(6):
    table = {f"key{wave}-{i}": [i, str(i), (i, i * 2)] for i in range(60000)}
    rows = [list(range(i % 50)) for i in range(40000)]
    total += sum(len(v[1]) for v in table.values()) + sum(len(r) for r in rows)
    if wave % 2 == 0:
        del table
    words = " ".join(str(i * 7919 % 100003) for i in range(20000)).split()
    total += len(set(words))
    print(wave, total)
print("done", total, sys.version_info[0])
