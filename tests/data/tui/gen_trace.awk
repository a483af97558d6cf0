# Writes a trace in npuscope's own flavour (component ids, op kinds, ADR-0052 details) for
# the TUI's end-to-end tests: PES processing elements of one cube, each running N rounds of
# dma_read (40 cycles), gemm_f16 (50) and exp (10), at 1 GHz; a marker half way, one
# prefill and two decode tokens, and a bandwidth sample per round.
#   awk -v PES=4 -v N=50 -f gen_trace.awk > trace.json
BEGIN {
    if (!PES) PES = 4
    if (!N) N = 50
    print "{\"version\": \"1.0\","
    print " \"run_metadata\": {\"run_id\": \"gen_001\", \"model_name\": \"GenNet\"},"
    print " \"config_snapshot\": {\"clock_ghz\": 1.0, \"memory\": {\"dram_peak_bw_bytes_per_cycle\": 64}},"
    print " \"timeline_events\": ["
    sep = ""
    for (pe = 0; pe < PES; pe++) {
        c = "sip0.cube0.pe" pe
        for (i = 0; i < N; i++) {
            t = i * 100 + pe * 5
            printf "%s{\"type\": \"ENGINE_EVENT\", \"engine\": \"DMA\", \"engine_id\": %d, \"op\": \"dma_read\", \"start_cycle\": %d, \"end_cycle\": %d, \"component_id\": \"%s.pe_dma\", \"op_kind\": \"memory\", \"details\": {\"src_addr\": %d, \"nbytes\": 2048, \"handle_id\": \"h%d\"}}\n", sep, pe, t, t + 40, c, 65536 * pe + 2048 * i, i
            sep = ","
            printf ",{\"type\": \"ENGINE_EVENT\", \"engine\": \"TE\", \"engine_id\": %d, \"op\": \"gemm_f16\", \"start_cycle\": %d, \"end_cycle\": %d, \"component_id\": \"%s.pe_gemm\", \"op_kind\": \"gemm\", \"details\": {\"m\": 64, \"n\": 64, \"k\": 64, \"src_a_space\": \"tcm\", \"src_a_addr\": %d, \"src_b_space\": \"tcm\", \"src_b_addr\": %d, \"dst_space\": \"tcm\", \"dst_addr\": %d, \"shape_a\": [64, 64], \"shape_b\": [64, 64], \"shape_out\": [64, 64], \"dtype_in\": \"f16\", \"dtype_out\": \"f32\"}}\n", pe, t + 40, t + 90, c, 0, 8192, 16384
            printf ",{\"type\": \"ENGINE_EVENT\", \"engine\": \"VE\", \"engine_id\": %d, \"op\": \"exp\", \"start_cycle\": %d, \"end_cycle\": %d, \"component_id\": \"%s.pe_math\", \"op_kind\": \"math\"}\n", pe, t + 90, t + 100, c
        }
    }
    printf ",{\"type\": \"MARKER_EVENT\", \"name\": \"HALFWAY\", \"cycle\": %d}\n", N * 50
    printf ",{\"type\": \"TOKEN_EVENT\", \"phase\": \"PREFILL\", \"token_index\": 0, \"start_cycle\": 0, \"end_cycle\": %d}\n", N * 50
    printf ",{\"type\": \"TOKEN_EVENT\", \"phase\": \"DECODE\", \"token_index\": 0, \"start_cycle\": %d, \"end_cycle\": %d}\n", N * 50, N * 75
    printf ",{\"type\": \"TOKEN_EVENT\", \"phase\": \"DECODE\", \"token_index\": 1, \"start_cycle\": %d, \"end_cycle\": %d}\n", N * 75, N * 100 + 5 * PES
    print "],"
    print " \"bandwidth_samples\": ["
    for (i = 0; i < N; i++)
        printf "%s{\"cycle\": %d, \"window_cycles\": 100, \"dram_read_bytes\": %d, \"dram_write_bytes\": 0}\n", (i ? "," : ""), i * 100, 2048 * PES
    print "],"
    print " \"summary_metrics\": {}"
    print "}"
}
