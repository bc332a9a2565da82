package mp4

import (
	"fmt"
	"image"
	"math"
	"math/bits"
)

// Profile is the H.264 profile_idc the writer declares: Baseline, with
// constraint_set0 and constraint_set1 set (Constrained Baseline), the
// profile every browser decodes.
const Profile = 66

// constraints are the constraint_set flags byte: set0 and set1.
const constraints = 0xC0

// pcmMB is the size of one I_PCM macroblock's samples: 256 luma and two
// 8×8 chroma blocks.
const pcmMB = 256 + 2*64

// NAL unit headers (forbidden_zero_bit, nal_ref_idc 3, nal_unit_type).
const (
	nalIDR = 0x65 // coded slice of an IDR picture
	nalP   = 0x21 // coded slice of a non-IDR picture, nal_ref_idc 1 (a reference)
	nalSPS = 0x67
	nalPPS = 0x68
)

// level is one row of H.264 Table A-1 that matters here.
type level struct {
	idc    byte
	mbps   int // MaxMBPS: macroblocks per second
	fs     int // MaxFS: macroblocks per frame
	kbitps int // MaxBR (×1000 bits/s for the VCL of Baseline)
}

var levels = []level{
	{10, 1485, 99, 64}, {11, 3000, 396, 192}, {12, 6000, 396, 384}, {13, 11880, 396, 768},
	{20, 11880, 396, 2000}, {21, 19800, 792, 4000}, {22, 20250, 1620, 4000},
	{30, 40500, 1620, 10000}, {31, 108000, 3600, 14000}, {32, 216000, 5120, 20000},
	{40, 245760, 8192, 20000}, {41, 245760, 8192, 50000}, {42, 522240, 8704, 50000},
	{50, 589824, 22080, 135000}, {51, 983040, 36864, 240000}, {52, 2073600, 36864, 240000},
}

// levelFor picks the lowest level whose frame size, macroblock rate and
// bit rate (one I_PCM picture a second) hold the stream.
func levelFor(wmb, hmb, fps int) (byte, error) {
	fs := wmb * hmb
	kbitps := (fs*(pcmMB*8+16) + 999) / 1000
	for _, l := range levels {
		side := int(math.Sqrt(float64(8 * l.fs)))
		if fs <= l.fs && wmb <= side && hmb <= side && fs*fps <= l.mbps && kbitps <= l.kbitps {
			return l.idc, nil
		}
	}
	return 0, fmt.Errorf("mp4: %d×%d macroblocks at %d fps fit no H.264 level", wmb, hmb, fps)
}

// bitWriter writes an RBSP most significant bit first.
type bitWriter struct {
	b     []byte
	cur   byte
	nbits uint // bits used in cur
}

func (w *bitWriter) u(n uint, v uint64) {
	for i := int(n) - 1; i >= 0; i-- {
		w.cur = w.cur<<1 | byte(v>>uint(i)&1)
		if w.nbits++; w.nbits == 8 {
			w.b = append(w.b, w.cur)
			w.cur, w.nbits = 0, 0
		}
	}
}

func (w *bitWriter) flag(f bool) {
	if f {
		w.u(1, 1)
	} else {
		w.u(1, 0)
	}
}

// ue writes v as an unsigned exp-Golomb code.
func (w *bitWriter) ue(v uint64) {
	n := uint(bits.Len64(v + 1))
	w.u(n-1, 0)
	w.u(n, v+1)
}

// se writes v as a signed exp-Golomb code.
func (w *bitWriter) se(v int64) {
	if v > 0 {
		w.ue(uint64(2*v - 1))
	} else {
		w.ue(uint64(-2 * v))
	}
}

// align writes zero bits up to the next byte boundary.
func (w *bitWriter) align() {
	for w.nbits != 0 {
		w.u(1, 0)
	}
}

// trailing writes rbsp_trailing_bits and returns the RBSP.
func (w *bitWriter) trailing() []byte {
	w.u(1, 1)
	w.align()
	return w.b
}

// nal wraps an RBSP into a NAL unit: the header byte, then the payload
// with emulation prevention (0x03 after two zero bytes whenever the next
// byte is 0x00..0x03), so no start code can appear inside.
func nal(header byte, rbsp []byte) []byte {
	out := make([]byte, 0, len(rbsp)+len(rbsp)/64+2)
	out = append(out, header)
	zeros := 0
	for _, c := range rbsp {
		if zeros >= 2 && c <= 3 {
			out = append(out, 3)
			zeros = 0
		}
		out = append(out, c)
		if c == 0 {
			zeros++
		} else {
			zeros = 0
		}
	}
	return out
}

// stream is the coded form of one Video: its parameter sets and picture
// geometry.
type stream struct {
	w, h      int // displayed size
	wmb, hmb  int // size in macroblocks
	fps       int
	frameBits uint // log2_max_frame_num
	level     byte
	sps, pps  []byte // NAL units, emulation prevented
	y, cb, cr []byte // the padded planes of the current key picture
	strideY   int
	strideC   int
}

func newStream(w, h, fps int) (*stream, error) {
	s := &stream{w: w, h: h, wmb: (w + 15) / 16, hmb: (h + 15) / 16, fps: fps}
	lv, err := levelFor(s.wmb, s.hmb, fps)
	if err != nil {
		return nil, err
	}
	s.level = lv
	s.frameBits = max(4, uint(bits.Len(uint(fps-1))))
	s.sps = nal(nalSPS, s.spsRBSP())
	s.pps = nal(nalPPS, ppsRBSP())
	s.strideY, s.strideC = 16*s.wmb, 8*s.wmb
	s.y = make([]byte, s.strideY*16*s.hmb)
	s.cb = make([]byte, s.strideC*8*s.hmb)
	s.cr = make([]byte, s.strideC*8*s.hmb)
	return s, nil
}

// spsRBSP is the sequence parameter set: Constrained Baseline, frame
// numbers wide enough for one second of frames, picture order from the
// frame number (type 2: output order is decoding order), one reference
// frame, cropping to the displayed size, and a VUI that says BT.601
// limited range colour, the frame rate, and that no frame is reordered.
func (s *stream) spsRBSP() []byte {
	var b bitWriter
	b.u(8, Profile)
	b.u(8, constraints)
	b.u(8, uint64(s.level))
	b.ue(0)                       // seq_parameter_set_id
	b.ue(uint64(s.frameBits - 4)) // log2_max_frame_num_minus4
	b.ue(2)                       // pic_order_cnt_type
	b.ue(1)                       // max_num_ref_frames
	b.flag(false)                 // gaps_in_frame_num_value_allowed_flag
	b.ue(uint64(s.wmb - 1))       // pic_width_in_mbs_minus1
	b.ue(uint64(s.hmb - 1))       // pic_height_in_map_units_minus1
	b.flag(true)                  // frame_mbs_only_flag
	b.flag(true)                  // direct_8x8_inference_flag
	right, bottom := 16*s.wmb-s.w, 16*s.hmb-s.h
	b.flag(right != 0 || bottom != 0) // frame_cropping_flag
	if right != 0 || bottom != 0 {
		b.ue(0)                  // frame_crop_left_offset
		b.ue(uint64(right / 2))  // frame_crop_right_offset, in 2-pixel units for 4:2:0
		b.ue(0)                  // frame_crop_top_offset
		b.ue(uint64(bottom / 2)) // frame_crop_bottom_offset
	}
	b.flag(true)             // vui_parameters_present_flag
	b.flag(false)            // aspect_ratio_info_present_flag
	b.flag(false)            // overscan_info_present_flag
	b.flag(true)             // video_signal_type_present_flag
	b.u(3, 5)                // video_format: unspecified
	b.flag(false)            // video_full_range_flag
	b.flag(true)             // colour_description_present_flag
	b.u(8, 6)                // colour_primaries: SMPTE 170M (BT.601)
	b.u(8, 6)                // transfer_characteristics
	b.u(8, 6)                // matrix_coefficients
	b.flag(false)            // chroma_loc_info_present_flag
	b.flag(true)             // timing_info_present_flag
	b.u(32, 1)               // num_units_in_tick
	b.u(32, uint64(2*s.fps)) // time_scale: two ticks a frame
	b.flag(true)             // fixed_frame_rate_flag
	b.flag(false)            // nal_hrd_parameters_present_flag
	b.flag(false)            // vcl_hrd_parameters_present_flag
	b.flag(false)            // pic_struct_present_flag
	b.flag(true)             // bitstream_restriction_flag
	b.flag(true)             // motion_vectors_over_pic_boundaries_flag
	b.ue(0)                  // max_bytes_per_pic_denom: no limit
	b.ue(0)                  // max_bits_per_mb_denom: no limit (I_PCM macroblocks are large)
	b.ue(16)                 // log2_max_mv_length_horizontal
	b.ue(16)                 // log2_max_mv_length_vertical
	b.ue(0)                  // max_num_reorder_frames
	b.ue(1)                  // max_dec_frame_buffering
	return b.trailing()
}

// ppsRBSP is the picture parameter set: CAVLC, one slice group, one
// reference index, QP 26, and deblocking control in the slice header.
func ppsRBSP() []byte {
	var b bitWriter
	b.ue(0)       // pic_parameter_set_id
	b.ue(0)       // seq_parameter_set_id
	b.flag(false) // entropy_coding_mode_flag: CAVLC
	b.flag(false) // bottom_field_pic_order_in_frame_present_flag
	b.ue(0)       // num_slice_groups_minus1
	b.ue(0)       // num_ref_idx_l0_default_active_minus1
	b.ue(0)       // num_ref_idx_l1_default_active_minus1
	b.flag(false) // weighted_pred_flag
	b.u(2, 0)     // weighted_bipred_idc
	b.se(0)       // pic_init_qp_minus26
	b.se(0)       // pic_init_qs_minus26
	b.se(0)       // chroma_qp_index_offset
	b.flag(true)  // deblocking_filter_control_present_flag
	b.flag(false) // constrained_intra_pred_flag
	b.flag(false) // redundant_pic_cnt_present_flag
	return b.trailing()
}

// Slice types (the +5 forms: every slice of the picture has the type).
const (
	sliceP = 5
	sliceI = 7
)

// sliceHeader writes the header of the picture's only slice.
func (s *stream) sliceHeader(b *bitWriter, typ uint64, frameNum int, idrID int) {
	b.ue(0)   // first_mb_in_slice
	b.ue(typ) // slice_type
	b.ue(0)   // pic_parameter_set_id
	b.u(s.frameBits, uint64(frameNum))
	if typ == sliceI {
		b.ue(uint64(idrID)) // idr_pic_id
	} else {
		b.flag(false) // num_ref_idx_active_override_flag
		b.flag(false) // ref_pic_list_modification_flag_l0
	}
	if typ == sliceI {
		b.flag(false) // no_output_of_prior_pics_flag
		b.flag(false) // long_term_reference_flag
	} else {
		b.flag(false) // adaptive_ref_pic_marking_mode_flag: sliding window
	}
	b.se(0) // slice_qp_delta
	b.ue(1) // disable_deblocking_filter_idc: off (I_PCM needs none, P_Skip copies)
}

// keySlice is the IDR picture of key number n: every macroblock I_PCM,
// carrying the padded planes' samples as they are.
func (s *stream) keySlice(n int) []byte {
	var b bitWriter
	b.b = make([]byte, 0, s.wmb*s.hmb*(pcmMB+2)+16)
	s.sliceHeader(&b, sliceI, 0, n%2) // consecutive IDR pictures need different ids
	for my := 0; my < s.hmb; my++ {
		for mx := 0; mx < s.wmb; mx++ {
			b.ue(25)  // mb_type I_PCM
			b.align() // pcm_alignment_zero_bit
			for r := 0; r < 16; r++ {
				o := (16*my+r)*s.strideY + 16*mx
				b.b = append(b.b, s.y[o:o+16]...)
			}
			for _, p := range [2][]byte{s.cb, s.cr} {
				for r := 0; r < 8; r++ {
					o := (8*my+r)*s.strideC + 8*mx
					b.b = append(b.b, p[o:o+8]...)
				}
			}
		}
	}
	return nal(nalIDR, b.trailing())
}

// skipSlice is the P picture frameNum frames after a key: one run of
// P_Skip over every macroblock, which copies the previous picture.
func (s *stream) skipSlice(frameNum int) []byte {
	var b bitWriter
	s.sliceHeader(&b, sliceP, frameNum%(1<<s.frameBits), 0)
	b.ue(uint64(s.wmb * s.hmb)) // mb_skip_run
	return nal(nalP, b.trailing())
}

// paint converts img to the padded planes: BT.601 limited range (Y 16–235,
// Cb/Cr 16–240, so no sample is 0), chroma the average of each 2×2 block,
// edges repeated into the padding that cropping hides.
func (s *stream) paint(img image.Image) {
	org := img.Bounds().Min
	pw, ph := 16*s.wmb, 16*s.hmb
	rgb := make([][3]float64, pw*ph)
	for y := 0; y < ph; y++ {
		for x := 0; x < pw; x++ {
			r, g, b, _ := img.At(org.X+min(x, s.w-1), org.Y+min(y, s.h-1)).RGBA()
			rgb[y*pw+x] = [3]float64{float64(r) / 257, float64(g) / 257, float64(b) / 257}
		}
	}
	for y := 0; y < ph; y++ {
		for x := 0; x < pw; x++ {
			s.y[y*s.strideY+x] = lumaOf(rgb[y*pw+x])
		}
	}
	for y := 0; y < ph/2; y++ {
		for x := 0; x < pw/2; x++ {
			var sum [3]float64
			for _, o := range [4]int{0, 1, pw, pw + 1} {
				p := rgb[2*y*pw+2*x+o]
				sum[0], sum[1], sum[2] = sum[0]+p[0], sum[1]+p[1], sum[2]+p[2]
			}
			cb, cr := chromaOf([3]float64{sum[0] / 4, sum[1] / 4, sum[2] / 4})
			s.cb[y*s.strideC+x], s.cr[y*s.strideC+x] = cb, cr
		}
	}
}

// BT.601 luma weights.
const kr, kb = 0.299, 0.114

func yOf(p [3]float64) float64 { return kr*p[0] + (1-kr-kb)*p[1] + kb*p[2] }

func lumaOf(p [3]float64) byte { return sample(16 + 219*yOf(p)/255) }

func chromaOf(p [3]float64) (cb, cr byte) {
	y := yOf(p)
	return sample(128 + 224*(p[2]-y)/(2*(1-kb))/255), sample(128 + 224*(p[0]-y)/(2*(1-kr))/255)
}

func sample(v float64) byte { return byte(max(1, min(255, math.Round(v)))) }

// ycbcr is the Y, Cb, Cr the writer stores for an opaque colour.
func ycbcr(r, g, b uint8) (y, cb, cr uint8) {
	p := [3]float64{float64(r), float64(g), float64(b)}
	cb, cr = chromaOf(p)
	return lumaOf(p), cb, cr
}
