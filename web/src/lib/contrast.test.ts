import { contrastRatio, hexToRgb, hslToRgb } from './contrast';

describe('contrastRatio', () => {
  it('matches WCAG reference values', () => {
    expect(contrastRatio([0, 0, 0], [255, 255, 255])).toBeCloseTo(21, 5);
    expect(contrastRatio([255, 255, 255], [255, 255, 255])).toBe(1);
    // #767676 on white is the classic 4.54:1.
    expect(contrastRatio(hexToRgb('#767676'), hexToRgb('#ffffff'))).toBeCloseTo(4.54, 2);
  });

  it('converts hsl as CSS does', () => {
    expect(hslToRgb(0, 100, 50)).toEqual([255, 0, 0]);
    expect(hslToRgb(120, 100, 25)).toEqual([0, 128, 0]);
    expect(hslToRgb(48, 92, 56)).toEqual([246, 205, 40]);
  });

  it('refuses what is not #rrggbb', () => {
    expect(() => hexToRgb('red')).toThrow('not a #rrggbb colour: red');
  });
});
