# Bank conflicts (wavefronts per warp request) of HYLA's tile accesses,
# session 49's layout vs session 50's, modelled from the IR's index maps.
# a: [H=16, R=16, K=16] f32; v: [H=16, K=16, 64] bf16.
def wavefronts(addrs_bytes, width):
    # Requests of `width` bytes: split into phases of 128 bytes' worth of lanes.
    lanes_per_phase = max(1, 128 // max(width, 4)) if width > 4 else 32
    total = 0
    for p in range(0, 32, lanes_per_phase):
        if not addrs_bytes[p:p + lanes_per_phase]: continue
        banks = {}
        for a in addrs_bytes[p:p + lanes_per_phase]:
            for w in range(0, width, 4):
                word = (a + w) // 4
                banks.setdefault(word % 32, set()).add(word)
        total += max(len(s) for s in banks.values())
    return total

def key_a(h, i, new):
    # 64-byte rows: rowsPerLine 2, period 4, chunk 4 floats
    if not new:
        return 0  # dynamic last dim: not swizzled
    return (((i >> 1) + h) & 3) * 4

def a_addr(h, i, j, new):
    return 4 * (h * 256 + i * 16 + (j ^ key_a(h, i, new)))

for new in (False, True):
    # z = sum_h a[h,i,j] v[h,j,e]: A[i,h] (fixed j): lane (g,c) loads A[g][2c] (32-bit)
    z_a = max(wavefronts([a_addr(2 * (t % 4) + dh, t // 4 + di, j, new) for t in range(32)], 4)
              for j in range(16) for dh in (0, 1, 8, 9) for di in (0, 8))
    # o = sum_j a[h,i,j] z[i,j,e]: A[h,j] (fixed i): lane (g,c) loads A[g][2c..2c+1] (64-bit)
    o_a = max(wavefronts([a_addr(t // 4 + dh, i, 2 * (t % 4) + dj, new) for t in range(32)], 8)
              for i in range(16) for dh in (0, 8) for dj in (0, 8))
    # scores C stores: s[h, i, j] (fixed h): lane (g,c) stores C[g][2c..2c+1]
    s_c = max(wavefronts([a_addr(h, t // 4 + di, 2 * (t % 4) + dj, new) for t in range(32)], 8)
              for h in range(16) for di in (0, 8) for dj in (0, 8))
    # v ldmatrix.trans for z's B operand (K = heads): 8 lanes give rows h=h0..h0+7 at key j
    def v_addr(h, j, chunk):
        key = ((j + h) % 8) if new else (j % 8)
        return 2 * ((h * 16 + j) * 64 + 8 * (chunk ^ key))
    v_b = max(wavefronts([v_addr(h0 + (t % 8), j, ch) for t in range(8)] , 16)
              for j in range(16) for h0 in (0, 8) for ch in range(8))
    print("new" if new else "old", "z's A:", z_a, " o's A:", o_a, " scores' C:", s_c, " v ldmatrix (per 8x8):", v_b)
