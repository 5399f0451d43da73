// Tiled transpose of a ROWS × COLS matrix through a 32 × 32 tile in workgroup memory. A
// workgroup of 32 × 8 invocations copies its tile in four passes of 8 rows: rows of the input
// are read and written coalesced, then the tile is read down a column, tile[lid.x][…]: the
// lanes of a warp are 32 words apart, all in one bank, and each read replays once per lane.
@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read_write> output: array<f32>;

const ROWS: u32 = 64u;
const COLS: u32 = 96u;
const TILE: u32 = 32u;
const PASS_ROWS: u32 = 8u;

var<workgroup> tile: array<array<f32, 32>, 32>;

@compute @workgroup_size(32, 8)
fn main(@builtin(local_invocation_id) lid: vec3<u32>,
        @builtin(workgroup_id) wg: vec3<u32>) {
    // Input element (row, col) = (wg.y·32 + lid.y + j, wg.x·32 + lid.x).
    let col = wg.x * TILE + lid.x;
    for (var j = 0u; j < TILE; j += PASS_ROWS) {
        let row = wg.y * TILE + lid.y + j;
        tile[lid.y + j][lid.x] = input[row * COLS + col];
    }
    workgroupBarrier();
    // Output element (row, col) = (wg.x·32 + lid.y + j, wg.y·32 + lid.x): input (col, row).
    let out_col = wg.y * TILE + lid.x;
    for (var j = 0u; j < TILE; j += PASS_ROWS) {
        let out_row = wg.x * TILE + lid.y + j;
        output[out_row * ROWS + out_col] = tile[lid.x][lid.y + j];
    }
}
