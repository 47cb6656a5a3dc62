import { act, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { toast, TOAST_DURATION_MS } from '@/lib/toast';
import { Toaster } from './toaster';

function region() {
  return screen.getByRole('region', { name: 'Notifications' });
}

describe('Toaster', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('shows at most three toasts, the newest ones', () => {
    render(<Toaster />);
    act(() => {
      for (const n of [1, 2, 3, 4, 5]) toast.info(`Message ${n}`);
    });
    const items = within(region()).getAllByRole('listitem');
    expect(items).toHaveLength(3);
    expect(items.map((item) => item.textContent)).toEqual(['Message 3', 'Message 4', 'Message 5']);
  });

  it('announces messages through a polite live region, each text once', () => {
    render(<Toaster />);
    act(() => {
      toast.error('Failed to update balance');
    });
    expect(within(region()).getByRole('list')).toHaveAttribute('aria-live', 'polite');
    expect(screen.getAllByText('Failed to update balance')).toHaveLength(1);
  });

  it('closes a toast after 4 seconds by default', () => {
    vi.useFakeTimers();
    render(<Toaster />);
    act(() => {
      toast.success('Saved');
    });
    act(() => {
      vi.advanceTimersByTime(TOAST_DURATION_MS - 10);
    });
    expect(within(region()).getByText('Saved')).toBeInTheDocument();
    act(() => {
      vi.advanceTimersByTime(10);
    });
    expect(within(region()).queryByText('Saved')).not.toBeInTheDocument();
    expect(TOAST_DURATION_MS).toBe(4000);
  });

  it('pauses while the pointer is over the notifications', () => {
    vi.useFakeTimers();
    render(<Toaster />);
    act(() => {
      toast.info('Hold on', { duration: 1000 });
    });
    act(() => {
      vi.advanceTimersByTime(600);
    });
    fireEvent.pointerEnter(region());
    act(() => {
      vi.advanceTimersByTime(5000);
    });
    expect(within(region()).getByText('Hold on')).toBeInTheDocument();
    fireEvent.pointerLeave(region());
    act(() => {
      vi.advanceTimersByTime(390);
    });
    expect(within(region()).getByText('Hold on')).toBeInTheDocument();
    act(() => {
      vi.advanceTimersByTime(20);
    });
    expect(within(region()).queryByText('Hold on')).not.toBeInTheDocument();
  });

  it('can be dismissed with its close button or Escape', async () => {
    render(<Toaster />);
    act(() => {
      toast.error('Failed to delete user');
      toast.info('Second');
    });
    act(() => {
      within(region()).getAllByRole('button', { name: 'Dismiss notification' })[0]!.click();
    });
    await waitFor(() => {
      expect(within(region()).queryByText('Failed to delete user')).not.toBeInTheDocument();
    });
    fireEvent.keyDown(within(region()).getByText('Second'), { key: 'Escape' });
    expect(within(region()).queryByRole('listitem')).not.toBeInTheDocument();
  });
});
