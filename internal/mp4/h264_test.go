package mp4

import (
	"bytes"
	"fmt"
	"image"
	"testing"
)

// spsFields decodes a sequence parameter set as far as the writer fills it.
func spsFields(t *testing.T, nalu []byte) []string {
	r := &bitReader{t: t, b: unescape(t, nalu)}
	var f []string
	add := func(name string, v any) { f = append(f, fmt.Sprintf("%s=%v", name, v)) }
	add("profile_idc", r.u(8))
	add("constraint_flags", fmt.Sprintf("%08b", r.u(8)))
	add("level_idc", r.u(8))
	add("sps_id", r.ue())
	add("log2_max_frame_num_minus4", r.ue())
	add("pic_order_cnt_type", r.ue())
	add("max_num_ref_frames", r.ue())
	add("gaps", r.u(1))
	add("width_mbs_minus1", r.ue())
	add("height_mbs_minus1", r.ue())
	add("frame_mbs_only", r.u(1))
	add("direct_8x8", r.u(1))
	if crop := r.u(1); crop == 1 {
		add("crop", fmt.Sprint(r.ue(), r.ue(), r.ue(), r.ue()))
	}
	add("vui", r.u(1))
	add("aspect,overscan", fmt.Sprint(r.u(1), r.u(1)))
	add("signal_type", r.u(1))
	add("format,full_range", fmt.Sprint(r.u(3), r.u(1)))
	add("colour_description", r.u(1))
	add("primaries,transfer,matrix", fmt.Sprint(r.u(8), r.u(8), r.u(8)))
	add("chroma_loc", r.u(1))
	add("timing", r.u(1))
	add("tick,scale,fixed", fmt.Sprint(r.u(32), r.u(32), r.u(1)))
	add("hrd,hrd,pic_struct", fmt.Sprint(r.u(1), r.u(1), r.u(1)))
	add("restriction", r.u(1))
	add("mvs_over_bounds,bytes_denom,bits_denom,mv_h,mv_v,reorder,dpb", fmt.Sprint(r.u(1), r.ue(), r.ue(), r.ue(), r.ue(), r.ue(), r.ue()))
	r.trailing()
	return f
}

func TestSPS(t *testing.T) {
	for _, tc := range []struct {
		w, h, fps int
		want      string
	}{
		{160, 90, 10, "profile_idc=66 constraint_flags=11000000 level_idc=11 sps_id=0 log2_max_frame_num_minus4=0 " +
			"pic_order_cnt_type=2 max_num_ref_frames=1 gaps=0 width_mbs_minus1=9 height_mbs_minus1=5 frame_mbs_only=1 " +
			"direct_8x8=1 crop=0 0 0 3 vui=1 aspect,overscan=0 0 signal_type=1 format,full_range=5 0 " +
			"colour_description=1 primaries,transfer,matrix=6 6 6 chroma_loc=0 timing=1 tick,scale,fixed=1 20 1 " +
			"hrd,hrd,pic_struct=0 0 0 restriction=1 mvs_over_bounds,bytes_denom,bits_denom,mv_h,mv_v,reorder,dpb=1 0 0 16 16 0 1"},
		{90, 160, 30, "profile_idc=66 constraint_flags=11000000 level_idc=11 sps_id=0 log2_max_frame_num_minus4=1 " +
			"pic_order_cnt_type=2 max_num_ref_frames=1 gaps=0 width_mbs_minus1=5 height_mbs_minus1=9 frame_mbs_only=1 " +
			"direct_8x8=1 crop=0 3 0 0 vui=1 aspect,overscan=0 0 signal_type=1 format,full_range=5 0 " +
			"colour_description=1 primaries,transfer,matrix=6 6 6 chroma_loc=0 timing=1 tick,scale,fixed=1 60 1 " +
			"hrd,hrd,pic_struct=0 0 0 restriction=1 mvs_over_bounds,bytes_denom,bits_denom,mv_h,mv_v,reorder,dpb=1 0 0 16 16 0 1"},
		{64, 32, 1, "profile_idc=66 constraint_flags=11000000 level_idc=10 sps_id=0 log2_max_frame_num_minus4=0 " +
			"pic_order_cnt_type=2 max_num_ref_frames=1 gaps=0 width_mbs_minus1=3 height_mbs_minus1=1 frame_mbs_only=1 " +
			"direct_8x8=1 vui=1 aspect,overscan=0 0 signal_type=1 format,full_range=5 0 " +
			"colour_description=1 primaries,transfer,matrix=6 6 6 chroma_loc=0 timing=1 tick,scale,fixed=1 2 1 " +
			"hrd,hrd,pic_struct=0 0 0 restriction=1 mvs_over_bounds,bytes_denom,bits_denom,mv_h,mv_v,reorder,dpb=1 0 0 16 16 0 1"},
	} {
		v := Video{Width: tc.w, Height: tc.h, FPS: tc.fps, Seconds: 1, Frame: stripes(tc.w, tc.h)}
		_, sps, _ := checkFile(t, write(t, v), v)
		if got := fmt.Sprint(spsFields(t, sps)); got != "["+tc.want+"]" {
			t.Errorf("%d×%d@%d:\n got %s\nwant [%s]", tc.w, tc.h, tc.fps, got, tc.want)
		}
	}
}

func TestPPS(t *testing.T) {
	v := Video{Width: 160, Height: 90, FPS: 10, Seconds: 1, Frame: stripes(160, 90)}
	_, _, pps := checkFile(t, write(t, v), v)
	if hexOf(pps) != "68ce3c80" {
		t.Errorf("PPS %x", pps)
	}
	r := &bitReader{t: t, b: unescape(t, pps)}
	got := fmt.Sprint(r.ue(), r.ue(), r.u(1), r.u(1), r.ue(), r.ue(), r.ue(), r.u(1), r.u(2), r.se(), r.se(), r.se(), r.u(1), r.u(1), r.u(1))
	r.trailing()
	// ids, CAVLC, no field POC, one slice group, one reference each list,
	// no weighting, QP 26, chroma offset 0, deblocking control on,
	// no constrained intra, no redundant pictures.
	if got != "0 0 0 0 0 0 0 0 0 0 0 0 1 0 0" {
		t.Errorf("PPS fields %s", got)
	}
}

// decodeSlice decodes the writer's slices: an IDR of I_PCM macroblocks
// into planes, or a P slice that must skip every macroblock.
func decodeSlice(t *testing.T, nalu []byte, wmb, hmb int, frameBits int) (frameNum int, y, cb, cr []byte) {
	t.Helper()
	r := &bitReader{t: t, b: unescape(t, nalu)}
	idr := nalu[0]&31 == 5
	if first := r.ue(); first != 0 {
		t.Fatalf("first_mb_in_slice %d", first)
	}
	typ := r.ue()
	if pps := r.ue(); pps != 0 || (idr && typ != 7) || (!idr && typ != 5) {
		t.Fatalf("slice type %d, pps %d", typ, pps)
	}
	frameNum = int(r.u(frameBits))
	if idr {
		r.ue() // idr_pic_id
		if frameNum != 0 || r.u(1) != 0 || r.u(1) != 0 {
			t.Fatal("IDR header")
		}
	} else if r.u(1) != 0 || r.u(1) != 0 || r.u(1) != 0 {
		t.Fatal("P header: override, list modification or adaptive marking")
	}
	if qp, deblock := r.se(), r.ue(); qp != 0 || deblock != 1 {
		t.Fatalf("qp delta %d, deblocking idc %d", qp, deblock)
	}
	if !idr {
		if run := r.ue(); run != uint64(wmb*hmb) {
			t.Fatalf("mb_skip_run %d of %d macroblocks", run, wmb*hmb)
		}
		r.trailing()
		return frameNum, nil, nil, nil
	}
	sy, sc := 16*wmb, 8*wmb
	y, cb, cr = make([]byte, sy*16*hmb), make([]byte, sc*8*hmb), make([]byte, sc*8*hmb)
	for my := range hmb {
		for mx := range wmb {
			if mbType := r.ue(); mbType != 25 {
				t.Fatalf("mb_type %d", mbType)
			}
			for r.pos%8 != 0 {
				if r.u(1) != 0 {
					t.Fatal("pcm_alignment_zero_bit is 1")
				}
			}
			for i := range 256 {
				y[(16*my+i/16)*sy+16*mx+i%16] = byte(r.u(8))
			}
			for _, p := range [][]byte{cb, cr} {
				for i := range 64 {
					p[(8*my+i/8)*sc+8*mx+i%8] = byte(r.u(8))
				}
			}
		}
	}
	r.trailing()
	return 0, y, cb, cr
}

// TestPictures decodes every slice and compares the key pictures with
// the frames converted independently (the shown area; the padding
// repeats the edges).
func TestPictures(t *testing.T) {
	for _, v := range []Video{
		{Width: 90, Height: 160, FPS: 4, Seconds: 3},
		{Width: 34, Height: 18, FPS: 20, Seconds: 2},
	} {
		v.Frame = stripes(v.Width, v.Height)
		samples, sps, _ := checkFile(t, write(t, v), v)
		wmb, hmb := (v.Width+15)/16, (v.Height+15)/16
		frameBits := 4
		for 1<<frameBits < v.FPS {
			frameBits++
		}
		if f := spsFields(t, sps)[4]; f != fmt.Sprintf("log2_max_frame_num_minus4=%d", frameBits-4) {
			t.Fatal(f)
		}
		for i, s := range samples {
			frameNum, y, cb, cr := decodeSlice(t, s.nals[0], wmb, hmb, frameBits)
			if frameNum != i%v.FPS {
				t.Fatalf("sample %d: frame_num %d", i, frameNum)
			}
			if !s.key {
				continue
			}
			img := v.Frame(i / v.FPS).(*image.NRGBA)
			sy, sc := 16*wmb, 8*wmb
			for py := range 16 * hmb {
				for px := range 16 * wmb {
					c := img.NRGBAAt(min(px, v.Width-1), min(py, v.Height-1))
					wy, _, _ := ycbcr(c.R, c.G, c.B)
					if got := y[py*sy+px]; got != wy {
						t.Fatalf("second %d: Y(%d,%d) = %d, want %d", i/v.FPS, px, py, got, wy)
					}
				}
			}
			// Chroma of a 2×2 block inside one colour bar is that colour's.
			for py := range 8 * hmb {
				for px := range 8 * wmb {
					x0, y0 := min(2*px, v.Width-1), min(2*py, v.Height-1)
					x1, y1 := min(2*px+1, v.Width-1), min(2*py+1, v.Height-1)
					c := img.NRGBAAt(x0, y0)
					if y1 >= v.Height/2 || c != img.NRGBAAt(x1, y0) || c != img.NRGBAAt(x0, y1) || c != img.NRGBAAt(x1, y1) {
						continue
					}
					_, wcb, wcr := ycbcr(c.R, c.G, c.B)
					if cb[py*sc+px] != wcb || cr[py*sc+px] != wcr {
						t.Fatalf("second %d: CbCr(%d,%d) = %d,%d, want %d,%d", i/v.FPS, px, py, cb[py*sc+px], cr[py*sc+px], wcb, wcr)
					}
				}
			}
		}
	}
}

func TestColours(t *testing.T) {
	for _, tc := range []struct {
		r, g, b, y, cb, cr uint8
	}{
		{0, 0, 0, 16, 128, 128},
		{255, 255, 255, 235, 128, 128},
		{255, 0, 0, 81, 90, 240},
		{0, 255, 0, 145, 54, 34},
		{0, 0, 255, 41, 240, 110},
		{128, 128, 128, 126, 128, 128},
	} {
		y, cb, cr := ycbcr(tc.r, tc.g, tc.b)
		if y != tc.y || cb != tc.cb || cr != tc.cr {
			t.Errorf("%d,%d,%d → %d,%d,%d, want %d,%d,%d", tc.r, tc.g, tc.b, y, cb, cr, tc.y, tc.cb, tc.cr)
		}
	}
}

func TestEmulationPrevention(t *testing.T) {
	for _, tc := range []struct{ in, want []byte }{
		{[]byte{0, 0, 0}, []byte{0, 0, 3, 0}},
		{[]byte{0, 0, 1, 0, 0, 2}, []byte{0, 0, 3, 1, 0, 0, 3, 2}},
		{[]byte{0, 0, 3, 0, 0, 4}, []byte{0, 0, 3, 3, 0, 0, 4}},
		{[]byte{0, 0, 0, 0, 0}, []byte{0, 0, 3, 0, 0, 3, 0}},
		{[]byte{1, 0, 0x80}, []byte{1, 0, 0x80}},
	} {
		got := nal(0x65, append(tc.in, 0x80))
		if !bytes.Equal(got, append(append([]byte{0x65}, tc.want...), 0x80)) {
			t.Errorf("%x → %x", tc.in, got[1:])
		}
		if back := unescape(t, got); !bytes.Equal(back, append(tc.in, 0x80)) {
			t.Errorf("%x → %x → %x", tc.in, got, back)
		}
	}
}

func TestLevels(t *testing.T) {
	for _, tc := range []struct {
		w, h, fps int
		want      byte
	}{
		{64, 32, 1, 10}, {160, 90, 10, 11}, {160, 90, 60, 12}, {320, 240, 10, 20}, {176, 144, 15, 12}, {240, 176, 15, 13},
		{640, 360, 8, 22}, {1280, 720, 1, 31}, {1920, 1080, 30, 41}, {1920, 1080, 60, 42}, {4096, 2304, 1, 51},
	} {
		got, err := levelFor((tc.w+15)/16, (tc.h+15)/16, tc.fps)
		if err != nil || got != tc.want {
			t.Errorf("%d×%d@%d: level %d, %v; want %d", tc.w, tc.h, tc.fps, got, err, tc.want)
		}
	}
}
