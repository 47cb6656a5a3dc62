import { act, fireEvent, render, renderHook } from '@testing-library/react';
import { setHotkeysEnabled, useHotkeys, useHotkeysEnabled, type Hotkey } from './use-hotkeys';

function keys(run: () => void, disabled = false): Hotkey[] {
  return [{ key: 'h', label: 'H', description: 'Hit', run, disabled }];
}

describe('useHotkeys', () => {
  it('is off by default and remembers the switch', () => {
    const { result } = renderHook(() => useHotkeysEnabled());
    expect(result.current).toBe(false);
    act(() => {
      setHotkeysEnabled(true);
    });
    expect(result.current).toBe(true);
    expect(window.localStorage.getItem('fairplay.hotkeys')).toBe('on');
  });

  it('fires only when on, without modifiers, outside text fields and not while disabled', () => {
    const run = vi.fn();
    const { rerender } = renderHook(
      ({ disabled }) => {
        useHotkeys(keys(run, disabled));
      },
      { initialProps: { disabled: false } },
    );
    fireEvent.keyDown(window, { key: 'h' });
    expect(run).not.toHaveBeenCalled();
    act(() => {
      setHotkeysEnabled(true);
    });
    fireEvent.keyDown(window, { key: 'H' });
    expect(run).toHaveBeenCalledTimes(1);
    fireEvent.keyDown(window, { key: 'h', ctrlKey: true });
    fireEvent.keyDown(window, { key: 'h', shiftKey: true });
    fireEvent.keyDown(window, { key: 'h', repeat: true });
    expect(run).toHaveBeenCalledTimes(1);
    rerender({ disabled: true });
    fireEvent.keyDown(window, { key: 'h' });
    expect(run).toHaveBeenCalledTimes(1);
    rerender({ disabled: false });
    const { getByLabelText, getByRole } = render(
      <>
        <label>
          Amount <input type="number" />
        </label>
        <div role="dialog" aria-label="Open dialog">
          <button type="button">In dialog</button>
        </div>
      </>,
    );
    fireEvent.keyDown(getByLabelText('Amount'), { key: 'h' });
    fireEvent.keyDown(getByRole('button', { name: 'In dialog' }), { key: 'h' });
    expect(run).toHaveBeenCalledTimes(1);
    fireEvent.keyDown(document.body, { key: 'h' });
    expect(run).toHaveBeenCalledTimes(2);
  });

  it('leaves Space to a focused button and never fires a disabled key', () => {
    const bet = vi.fn();
    const split = vi.fn();
    renderHook(() => {
      useHotkeys([
        { key: ' ', label: 'Space', description: 'Bet', run: bet },
        { key: 'p', label: 'P', description: 'Split', run: split, disabled: true },
      ]);
    });
    act(() => {
      setHotkeysEnabled(true);
    });
    const { getByRole } = render(<button type="button">Other</button>);
    fireEvent.keyDown(getByRole('button'), { key: ' ' });
    fireEvent.keyDown(document.body, { key: 'p' });
    expect(bet).not.toHaveBeenCalled();
    expect(split).not.toHaveBeenCalled();
    const event = new KeyboardEvent('keydown', { key: ' ', bubbles: true, cancelable: true });
    document.body.dispatchEvent(event);
    expect(bet).toHaveBeenCalledTimes(1);
    expect(event.defaultPrevented).toBe(true);
  });
});
